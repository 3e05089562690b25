#!/usr/bin/env python3
"""The include rule of core/ (docs/architecture.md): data flows down

    base -> plan -> spec | pod -> runtime -> kind -> pytest | sched -> report | export -> api

and a file may include headers only from its own folder and from the
folders its folder may use (ALLOWED below); core/cli/ uses nothing but
include/tpuci.h. System headers (<...>) are not looked at. No file of
core/ has more than MAX_LINES lines.

    includes.py [CORE_DIR]      checks the tree, prints each offence
                                as file:line: and exits 1 if any
    includes.py --self-test     checks that an offence is found: copies
                                the tree, adds backwards includes, and
                                fails unless each is reported
"""
import os
import re
import shutil
import sys
import tempfile

# What each folder of core/ may include, besides itself and tpuci.h.
ALLOWED = {
    "base": [],
    "plan": ["base"],
    "spec": ["plan", "base"],
    # A job instance as Kubernetes objects (pods, Indexed Jobs, Services,
    # JobSets), built from the plan alone: below both the runtimes (a
    # Kubernetes driver would run these pods) and export/ (which writes
    # them out), and above nothing but the plan.
    "pod": ["plan", "base"],
    "runtime": ["pod", "plan", "base"],
    "kind": ["runtime", "pod", "plan", "base"],
    # The scheduler runs every job kind through kind/kind.h's table: it
    # includes no kind's own folder (core/kind/pytest/ is the pytest kind's).
    "sched": ["kind", "runtime", "pod", "plan", "base"],
    "report": ["sched", "kind", "runtime", "pod", "plan", "base"],
    "export": ["kind", "runtime", "pod", "plan", "base"],
    "api": ["export", "report", "sched", "kind", "runtime", "pod", "spec", "plan", "base"],
    "cli": [],
}
# A job kind's own folder under kind/ (kind/pytest/): kind/kinds.c's
# table and the folders after the scheduler (report/, export/, api/) may
# include it; the scheduler, the other kinds and kind/'s own shared files
# may not (a kind is reached through the table).
KINDS = ("kind/pytest",)
KIND_USERS = ("report", "export", "api")
KIND_TABLE = "kind/kinds.c"
# Inside runtime/, a driver's folder is its own: drivers do not include
# each other's headers (only runtime/runtime.h, runtime/engine/ where
# allowed, and their own).
DRIVERS = ("runtime/docker", "runtime/swarm", "runtime/ssh")
# runtime/engine/ is the Docker Engine API client (where the engine is,
# the stream format, container bodies, a gang's verdict, podman's
# differences). Only the drivers that speak to an engine include it, and it
# includes no driver: a swarm manager is a Docker Engine too.
ENGINE = "runtime/engine"
ENGINE_USERS = ("runtime/docker", "runtime/swarm", "runtime/unit")
# runtime/http/ is the HTTP client on the loop (a unix socket, TCP, TLS
# or an ssh tunnel), which knows no server's API: any driver's folder and
# the engine client may include it (a Kubernetes driver would, for its API
# server), and it includes no driver, not runtime/engine/ and not
# runtime/unit/ (a server's specifics are passed in: target.h).
HTTP = "runtime/http"
HTTP_USERS = DRIVERS + (ENGINE,)
# runtime/unit/ is the attempt state machine of the engine drivers (a
# driver fills its table of operations). Only the drivers include it, and
# it includes no driver (the DRIVERS rule above); of runtime/engine/ it
# uses the gang's verdict only.
UNIT = "runtime/unit"
UNIT_USERS = DRIVERS
UNIT_ENGINE = ("runtime/engine/gang.h",)
# runtime/ssh/ runs processes on a slice's workers (or a job's container
# there, made with the worker's docker CLI): of the engine client it uses
# only what unit.h brings (gang.h) and container.h's pure names and
# labels (so the docker runtime's gc knows its containers).
SSH = "runtime/ssh"
SSH_ENGINE = UNIT_ENGINE + ("runtime/engine/container.h",)

# runtime/props.h is what each runtime is (data, no driver): a leaf that
# includes nothing of core/ and that the folders below runtime/ read too,
# so that none of them tests a runtime by its name (runtime_names.py).
LEAVES = {"runtime/props.h": ("plan", "spec")}

MAX_LINES = 800

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def folder_of(rel):
    return rel.split("/", 1)[0] if "/" in rel else ""


def check(core):
    offences = []
    for dirpath, _, files in os.walk(core):
        for name in sorted(files):
            if not name.endswith((".c", ".h")):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, core)
            top = folder_of(rel)
            if top not in ALLOWED:
                offences.append("%s: folder '%s' has no place in the layout" % (rel, top))
                continue
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read().split("\n")
            if len(text) > MAX_LINES + 1:
                offences.append("%s: %d lines, over %d: split it by concept" % (rel, len(text) - 1, MAX_LINES))
            if True:
                for n, line in enumerate(text, 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    inc = m.group(1)
                    if inc == "tpuci.h":
                        continue
                    if top == "cli":
                        if "/" in inc or not os.path.exists(os.path.join(dirpath, inc)):
                            offences.append("%s:%d: core/cli/ may include only tpuci.h and its own headers, not \"%s\"" % (rel, n, inc))
                        continue
                    if "/" not in inc:
                        offences.append("%s:%d: \"%s\": name the folder (\"%s/%s\")" % (rel, n, inc, top, inc))
                        continue
                    target = folder_of(inc)
                    if not os.path.exists(os.path.join(core, inc)):
                        offences.append("%s:%d: \"%s\" is not a header of core/" % (rel, n, inc))
                        continue
                    if inc in LEAVES and top in LEAVES[inc]:
                        continue
                    if target != top and target not in ALLOWED[top]:
                        offences.append("%s:%d: core/%s/ may not include \"%s\" (core/%s/ comes after it)" % (rel, n, top, inc, target))
                        continue
                    for k in KINDS:
                        if inc.startswith(k + "/") and not rel.startswith(k + "/") \
                                and rel != KIND_TABLE and top not in KIND_USERS:
                            offences.append("%s:%d: \"%s\" is the %s kind's own header: reach "
                                            "the kind through kind/kinds.h" % (rel, n, inc, k))
                    for d in DRIVERS:
                        if inc.startswith(d + "/") and not rel.startswith(d + "/"):
                            offences.append("%s:%d: \"%s\" is the %s driver's own header" % (rel, n, inc, d))
                    if rel.startswith(HTTP + "/") and inc.startswith(ENGINE + "/"):
                        offences.append("%s:%d: \"%s\": the HTTP client includes no engine header "
                                        "(pass what it needs in: runtime/http/target.h)" % (rel, n, inc))
                    elif rel.startswith(SSH + "/") and inc.startswith(ENGINE + "/") \
                            and inc not in SSH_ENGINE:
                        offences.append("%s:%d: \"%s\": the ssh driver uses of the engine client only %s"
                                        % (rel, n, inc, ", ".join(SSH_ENGINE)))
                    elif inc.startswith(ENGINE + "/") and not rel.startswith(ENGINE + "/") \
                            and not any(rel.startswith(u + "/") for u in ENGINE_USERS + (SSH,)):
                        offences.append("%s:%d: \"%s\": only the engine drivers (%s) use the engine client"
                                        % (rel, n, inc, ", ".join(ENGINE_USERS)))
                    if rel.startswith(UNIT + "/") and inc.startswith(ENGINE + "/") \
                            and inc not in UNIT_ENGINE:
                        offences.append("%s:%d: \"%s\": the attempt core uses of the engine client only %s"
                                        % (rel, n, inc, ", ".join(UNIT_ENGINE)))
                    if inc.startswith(HTTP + "/") and not rel.startswith(HTTP + "/") \
                            and not any(rel.startswith(u + "/") for u in HTTP_USERS):
                        offences.append("%s:%d: \"%s\": only the drivers' folders and the engine client "
                                        "(%s) use the HTTP client" % (rel, n, inc, ", ".join(HTTP_USERS)))
                    if inc.startswith(UNIT + "/") and not rel.startswith(UNIT + "/") \
                            and not any(rel.startswith(u + "/") for u in UNIT_USERS):
                        offences.append("%s:%d: \"%s\": only the engine drivers (%s) use the attempt core"
                                        % (rel, n, inc, ", ".join(UNIT_USERS)))
    return offences


def self_test(core):
    tmp = tempfile.mkdtemp()
    try:
        copy = os.path.join(tmp, "core")
        shutil.copytree(core, copy)
        bad = [
            ("runtime/runtime.c", '#include "sched/scheduler.h"'),
            ("runtime/docker/driver.c", '#include "sched/scheduler.h"'),
            ("plan/plan.c", '#include "spec/spec.h"'),
            ("pod/names.c", '#include "runtime/runtime.h"'),
            ("pod/manifest.c", '#include "export/k8s/export.h"'),
            ("pod/jobset.c", '#include "spec/spec.h"'),
            ("plan/topology.c", '#include "pod/pod.h"'),
            ("spec/load.c", '#include "pod/manifest.h"'),
            ("base/util.c", '#include "plan/plan.h"'),
            ("cli/main.c", '#include "plan/plan.h"'),
            ("runtime/local.c", '#include "runtime/engine/engine.h"'),
            ("runtime/swarm/driver.c", '#include "runtime/docker/driver.h"'),
            ("runtime/engine/engine.c", '#include "runtime/swarm/swarm.h"'),
            ("runtime/engine/demux.c", '#include "runtime/docker/driver.h"'),
            ("runtime/http/http.c", '#include "runtime/engine/host.h"'),
            ("runtime/http/sshdial.c", '#include "runtime/docker/driver.h"'),
            ("runtime/http/target.h", '#include "runtime/unit/unit.h"'),
            ("runtime/pyenv.c", '#include "runtime/http/http.h"'),
            ("sched/group.c", '#include "runtime/http/http.h"'),
            ("runtime/tpuvm.c", '#include "runtime/unit/unit.h"'),
            ("runtime/engine/gang.c", '#include "runtime/unit/unit.h"'),
            ("runtime/unit/attempt.c", '#include "runtime/swarm/swarm.h"'),
            ("runtime/unit/unit.h", '#include "runtime/engine/engine.h"'),
            ("runtime/ssh/driver.c", '#include "runtime/engine/engine.h"'),
            ("runtime/ssh/attempt.c", '#include "runtime/docker/driver.h"'),
            ("kind/pytest/junit.c", '#include "report/report.h"'),
            ("sched/scheduler.c", '#include "kind/pytest/kind.h"'),
            ("kind/command.c", '#include "kind/pytest/junit.h"'),
            ("sched/outcome.c", "/* padding */\n" * (MAX_LINES + 1)),
        ]
        for f, line in bad:
            with open(os.path.join(copy, f), "a") as fh:
                fh.write("\n" + line + "\n")
        found = check(copy)
        missed = [f for f, _ in bad if not any(o.startswith(f + ":") for o in found)]
        if missed:
            print("self-test: offences not reported in: " + ", ".join(missed))
            return 1
        print("self-test: all %d offences reported" % len(bad))
        return 0
    finally:
        shutil.rmtree(tmp)


def main():
    args = sys.argv[1:]
    here = os.path.dirname(os.path.abspath(__file__))
    core = os.path.join(here, "..", "..", "core")
    if args and args[0] == "--self-test":
        if len(args) > 1:
            core = args[1]
        if check(core):
            print("self-test: the tree itself has offences; run without --self-test")
            return 1
        return self_test(core)
    if args:
        core = args[0]
    offences = check(core)
    for o in offences:
        print(o)
    if offences:
        print("%d include(s) break the layout (docs/architecture.md)" % len(offences))
        return 1
    print("includes: every file of core/ follows the layout")
    return 0


if __name__ == "__main__":
    sys.exit(main())
