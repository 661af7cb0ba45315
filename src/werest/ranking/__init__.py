"""Ranking: the leaderboard's statistics (estimates per dataset and their macro average,
bootstraps, neighbour tests, fairness audits, a few labels); :mod:`werest.report` presents
them."""
