"""The model: the regressor, model files and cards, training and intervals."""
