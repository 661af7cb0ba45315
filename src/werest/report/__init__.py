"""Reports: the leaderboard, its page, and the evaluation reports."""
