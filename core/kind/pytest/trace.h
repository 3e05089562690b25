/* What a pytest failure's traceback says: the frames it names (each
 * "path:line"), the class of the exception it ended with, and from those
 * where a test failed in the project (docs/pytest.md, "Where a test
 * failed"). Pure text work, except tpuci__trace_locate(), which places
 * the frames on the host the way tpuci__pytest_host_path() places a
 * test's file. */
#ifndef TPUCI_PYTEST_TRACE_H
#define TPUCI_PYTEST_TRACE_H

#include "kind/pytest/junit.h"
#include "plan/plan.h"

typedef struct {
  char *path; /* as the traceback writes it: relative to pytest's
                  current folder, or absolute */
  int line;   /* 1-based */
} tpuci__trace_frame_t;

/* The frames a traceback names, outermost first, appended to *frames
 * (*n of them; free with tpuci__trace_frames_free()). Read from pytest's
 * location lines in every --tb style: "path:LINE: message" (long, auto,
 * line), "path:LINE: in func" (short), and `File "path", line LINE`
 * (native). Returns how many were added. */
size_t tpuci__trace_frames(const char *text, tpuci__trace_frame_t **frames, size_t *n);
void tpuci__trace_frames_free(tpuci__trace_frame_t *frames, size_t n);

/* The class of the exception a failure ended with: the message of the
 * traceback's last "path:LINE: Name" line (pytest's crash line, long
 * style), else the name that starts the message or the last "E   Name:"
 * line ("ValueError: bad", "mypkg.errors.Oops", "Failed: DID NOT
 * RAISE"). A new string, or NULL when neither says one. */
char *tpuci__trace_exception(const char *text, const char *message);

/* Places the tests of `h` on the host: each test without a file there
 * (`path`: cut short, never run) gets its node id's file, joined to the
 * history's rootdir and placed like tpuci__pytest_host_path() does; and
 * each failing test gets its failure's location (fail_path, fail_line of
 * tpuci__test_hist_t): the innermost frame of its final
 * failure's traceback that is in the project. A frame's path is joined
 * to `cwd` (pytest's current folder; NULL: the history's rootdir) and
 * placed on the host like a test's file (through the job's mounts for
 * a container); it is in the project when it is below `root` (the
 * project's folder on the host, absolute; NULL: anywhere it could be
 * placed) and not in an installed package (no site-packages or
 * dist-packages folder on its way). Tests that do not fail, or whose
 * traceback names no such frame, get none. */
void tpuci__trace_locate(tpuci__history_t *h, const tpuci__instance_t *inst, const char *cwd,
                         const char *root);

/* 1 when the absolute `path` is `root` or below it. */
int tpuci__path_below(const char *path, const char *root);

#endif /* TPUCI_PYTEST_TRACE_H */
