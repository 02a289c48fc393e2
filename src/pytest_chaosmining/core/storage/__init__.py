"""Where results and models are kept: the model cache, the shipped pack, derived results,
atomic writes, and files decoded from disk."""
