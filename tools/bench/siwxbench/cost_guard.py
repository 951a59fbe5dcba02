"""The cost guard (tests/vm/scenarios/cost-guard): a cost run's figures
against budgets kept in the tree (tools/bench/cost-budgets.txt). A figure
more than TOLERANCE above its budget fails, and so does a budgeted figure
that was not counted, or counted as nothing: a guard that measures nothing
must not pass."""

# How far a figure may rise above its budget: the counts of the guard's
# steps repeat within about 2% from boot to boot (docs/performance.md).
TOLERANCE = 0.05


def read_budgets(path):
    """[(stack, measurement, side, figure, budget)] of a budgets file:
    "STACK MEASUREMENT SIDE FIGURE BUDGET" lines, '#' comments."""
    out = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            fields = line.split("#", 1)[0].split()
            if not fields:
                continue
            if len(fields) != 5:
                raise ValueError(f"{path}:{n}: expected STACK MEASUREMENT SIDE FIGURE BUDGET")
            out.append((*fields[:4], float(fields[4])))
    return out


def check(rows, budgets):
    """(lines to print, failures) of @rows (cost_report.summarize) against
    @budgets."""
    lines, failures = [], []
    for stack, meas, side, figure, budget in budgets:
        r = next((x for x in rows if x["stack"] == stack and x["measurement"] == meas and
                  x["does"] == side), None)
        value = r.get(figure) if r else None
        what = f"{stack} {meas} {side} {figure}"
        if not value or value <= 0:
            failures.append(f"{what}: not counted (budget {budget:.6g})")
            continue
        rise = value / budget - 1
        line = f"{what}: {value:.6g} against a budget of {budget:.6g} ({rise:+.1%})"
        lines.append(line)
        if rise > TOLERANCE:
            failures.append(f"{line}: more than {TOLERANCE:.0%} above")
    return lines, failures
