"""What every suite stands on, knowing no suite: ``storage`` (model cache, shipped
pack, derived results, atomic writes, decoding files from disk), ``training``
(regression, classification, batched ensembles, saliency guided training and the
training modes), ``metrics`` (attribution metrics, time and memory, the metric
catalog), ``verdicts`` (records, thresholds, baselines) and ``tiers``."""
