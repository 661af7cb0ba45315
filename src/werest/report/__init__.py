"""Reports: how results are presented (the leaderboard's console lines, Markdown, chart and
page, the estimate's console lines, the evaluation reports); they compute nothing new."""
