/* The installed Python packages a job that runs on this machine finds
 * (docs/cache.md): a site-packages folder of the environment its
 * variables name (VIRTUAL_ENV, CONDA_PREFIX, a PYTHONPATH folder that
 * holds distributions), keyed by what installing, upgrading or removing
 * a package changes: each distribution's record of its files (the
 * `*.dist-info` folder's RECORD, with every installed file's hash, else
 * its METADATA; an `*.egg-info`'s PKG-INFO), the `.pth` and `.egg-link`
 * files (editable installs) and the names of everything else at its top.
 * A file of an installed package edited in place is not seen (its
 * RECORD still holds the hash pip wrote). Blocking: reads the folder's
 * listing and one small file per distribution. */
#ifndef TPUCI_RUNTIME_PYENV_H
#define TPUCI_RUNTIME_PYENV_H

#include <stddef.h>

#include "base/util.h"

/* Whether the folder `dir` holds installed distributions (an entry named
 * `*.dist-info` or `*.egg-info`). */
int tpuci__pyenv_is_site(const char *dir);

/* The site-packages folders of the environment at `prefix`
 * (`PREFIX/lib/pythonX.Y/site-packages`), appended to out. */
void tpuci__pyenv_sites(const char *prefix, tpuci__strv_t *out);

/* The key of the site-packages folder `dir` into hex, and how many
 * distributions it holds into *packages. 0, or a negative code with err
 * naming the folder. */
int tpuci__pyenv_key(const char *dir, char hex[65], size_t *packages, tpuci__err_t *err);

#endif /* TPUCI_RUNTIME_PYENV_H */
