"""The command-line entry points: rose-gen (gen, hydra_app, preview), rose-verify,
rose-audit, rose-replay, and ``launch`` (the console scripts' extra check).

Each module parses arguments, calls one job and turns its errors into one line and an
exit status. May import anything in rose_gen; nothing imports it (but other cli modules).
"""
