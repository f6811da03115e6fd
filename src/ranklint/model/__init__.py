"""The facts as plain data, below the analysis: the event model and the rank-taint value.

The cache stores them and results carry them; they import nothing above the leaves."""
