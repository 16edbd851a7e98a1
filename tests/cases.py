"""What the test scripts of the cli and mpi suites share: Fail and Skip,
check, and run_case, which runs one case of a script and turns how it
ends into the exit status that `meson test` reads: 0 passed, 1 failed,
77 skipped.

The scripts find this module as they find pnm.py, by a path relative to
their own file:

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
"""

SKIP = 77


class Fail(Exception):
    """A check failed."""


class Skip(Exception):
    """The case cannot run here (a program or library is missing)."""


def check(cond, what):
    if not cond:
        raise Fail(what)


def run_case(name, fn, *args, fails=()):
    """Runs fn(*args) as case `name`; prints one line and returns the exit
    status. The exceptions in `fails` fail the case as Fail does."""
    try:
        fn(*args)
    except Skip as e:
        print("skip: %s" % e)
        return SKIP
    except (Fail,) + tuple(fails) as e:
        print("FAIL: %s: %s" % (name, e))
        return 1
    print("ok: %s" % name)
    return 0
