"""Estimation: guards, the label-free estimate, labels, prediction-powered inference and
sampling."""
