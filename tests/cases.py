"""What the test scripts of the cli and mpi suites share: Fail and Skip,
check, default_signals, and run_case, which runs one case of a script and turns how it
ends into the exit status that `meson test` reads: 0 passed, 1 failed,
77 skipped.

The scripts find this module by a path relative to their own file (and
imageio/pnm.py likewise, two folders up and into imageio/):

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
"""
import signal

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


ENDING_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2,
                  signal.SIGALRM, signal.SIGXCPU, signal.SIGVTALRM, signal.SIGPROF)


def default_signals():
    """For subprocess.Popen's preexec_fn: the signals that end a process
    (ENDING_SIGNALS) as the system has them by default, whatever the test
    runner inherited (nohup ignores SIGHUP, a background job SIGINT), so
    that a test of what a signal does sends one the program can catch."""
    for sig in ENDING_SIGNALS:
        signal.signal(sig, signal.SIG_DFL)
