"""The backtest of the controller's judges against scenarios with known truth.

scenarios: the file format; world: the simulated machines (the truth); runner: the real
controller over them in a scratch database; summary: what each judge caught, how late,
and what it halted for nothing. The command is manage.py phasing_backtest.
"""
