"""The evaluator's command-line entry points, one module per command:

``eval`` (rose-eval), ``compare``, ``power`` and ``report`` (its subcommands), ``run`` (rose-run),
``human`` (rose-human), ``export`` (rose-export), and ``args``, the one argument parser
every command (the generator's too) builds on.

Each module parses arguments, calls one job elsewhere in rose_eval and turns its errors into
one line and an exit status. Nothing outside this folder imports it, except the generator's
commands, which use ``args``.
"""
