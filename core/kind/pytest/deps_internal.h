/* What deps.c, deps_select.c and deps_update.c share (deps.h). */
#ifndef TPUCI_PYTEST_DEPS_INTERNAL_H
#define TPUCI_PYTEST_DEPS_INTERNAL_H

#include "kind/pytest/deps.h"

/* Adds k to x unless it is there. */
void tpuci__deps_ix_push(tpuci__deps_ix_t *x, size_t k);
/* Adds the function `name` of file `file` unless it is there. */
void tpuci__deps_need_block(tpuci__deps_need_t *n, size_t file, const char *name);
void tpuci__deps_need_free(tpuci__deps_need_t *n);
/* Room in rec->py and rec->flags after the tree grew from `old_n` files. */
void tpuci__deps_rec_files(tpuci__deps_rec_t *rec, size_t old_n);
/* A new test entry (its id copied). */
tpuci__deps_test_t *tpuci__deps_rec_test(tpuci__deps_rec_t *rec, const char *id);
/* Text without control characters, not empty. */
int tpuci__deps_text_ok(const char *s);
/* A relative path that stays below the root. */
int tpuci__deps_path_ok(const char *s);

#endif /* TPUCI_PYTEST_DEPS_INTERNAL_H */
