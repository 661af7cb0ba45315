"""Evaluation: the four cases, leave one domain out, a few labels, fairness."""
