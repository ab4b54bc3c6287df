"""rose_eval: the strict ROSE evaluator, analyses, runners and reports."""

__version__ = "0.1.0"
