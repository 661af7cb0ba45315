"""The statuses of a dataset's decision in ``winner.json`` (:mod:`werest.estimation.decision`),
in a module of their own so that what shows a decision (``report/``) reads them without the
decision's arithmetic."""

#: every other system is shown worse than the leader
DECIDED = "decided"
#: every other system is shown no better than the leader by more than the margin
GOOD = "good"
#: neither yet
UNDECIDED = "undecided"
