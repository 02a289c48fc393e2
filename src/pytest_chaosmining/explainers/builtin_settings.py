"""The built-in explainers' settings that their methods and the benchmarks share."""

#: steps of the built-in IG
IG_STEPS = 10
#: noisy samples of SmoothGrad and GradientShap
NOISE_SAMPLES = 10
