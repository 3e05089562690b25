"""The device check of a command job (expect_devices; docs/pytest.md,
"The device check"), before its command. core/kind/devices.c runs each
attempt of such a job as

    PYTHON -c <tpuci_devices.py><this file> DEVICES RESULTS COMMAND...

DEVICES is the check's argument (tpuci__devices_arg(),
core/plan/host_env.h), RESULTS the attempt's results folder as this
process sees it, COMMAND the job's command. The check runs in a child
process, so that what the frameworks opened to list their devices (a
TPU's device files, libtpu's lock) is closed again before the command
starts. On a match this process becomes COMMAND (exec: its exit status
and signals are the command's); on a mismatch the command never runs:
devices.json says why and the process exits DEVICES_EXIT, which tpuci
makes an infra attempt. tpuci_devices.py runs first in the same -c.
"""
import json
import os
import signal
import sys

import tpuci_devices


def check(spec, folder):
    """Runs the check in a child process: returns the mismatch, or None
    when the devices are the topology's (or nothing imports under "?")."""
    sys.stdout.flush()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            bad = tpuci_devices.check_and_record(spec, folder)
            code = tpuci_devices.DEVICES_EXIT if bad is not None else 0
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    status = os.waitpid(pid, 0)[1]
    if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
        return None
    if os.WIFEXITED(status) and os.WEXITSTATUS(status) == tpuci_devices.DEVICES_EXIT:
        with open(os.path.join(folder, tpuci_devices.DEVICES_FILE)) as f:
            return json.load(f)["mismatch"]
    # The check itself crashed (a framework that dies listing its
    # devices): it could not tell, which is no test of the command's.
    how = ("was killed by signal %d" % os.WTERMSIG(status) if os.WIFSIGNALED(status)
           else "ended with exit %d" % os.WEXITSTATUS(status))
    bad = "the check %s on worker-%s" % (how, os.environ.get("TPUCI_HOST", "0"))
    tpuci_devices.record(folder, spec, {}, bad)
    return bad


def run(argv):
    """Checks, then becomes the command `argv` (sys.argv, above)."""
    bad = check(argv[1], argv[2])
    if bad is not None:
        print("tpuci: device check: %s: the command does not run" % bad)
        sys.stdout.flush()
        # A swarm task's results folder is a tmpfs of its node: the
        # verdict goes back through the log.
        key = os.environ.get("TPUCI_RESULTS_LOG")
        if key:
            tpuci_devices.write_all((key + " results on\n").encode())
            tpuci_devices.send_results(key, argv[2], "begin")
        os._exit(tpuci_devices.DEVICES_EXIT)
    # Python ignores these at its start; the command gets them as it
    # would from a shell.
    for name in ("SIGPIPE", "SIGXFSZ"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
    command = argv[3:]
    try:
        os.execvp(command[0], command)
    except OSError as e:
        print("tpuci: cannot run %s: %s" % (command[0], e.strerror), file=sys.stderr)
        sys.stderr.flush()
        os._exit(127 if isinstance(e, FileNotFoundError) else 126)


if __name__ == "__main__":
    run(sys.argv)
