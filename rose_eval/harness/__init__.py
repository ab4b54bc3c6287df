"""Run ROSE inside other evaluation harnesses without losing what makes it strict.

One module per harness: ``inspect_task`` (an inspect_ai task), ``inspect_log`` (its logs
to predictions), ``lmms_eval_task`` and ``lmms_eval_log`` (an lmms-eval task folder and its
``--log_samples`` output), ``vlmevalkit`` (the TSV export and the result-file reader).
``common`` holds what they share. Only the modules named after inspect_ai import it;
lmms-eval and VLMEvalKit are never imported (their files are read as data), and nothing
in ``rose_eval``'s core imports this package except the one result-file hook in the CLI.
"""
