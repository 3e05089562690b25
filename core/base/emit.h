/* YAML written with libyaml's emitter, for every file tpuci writes out
 * for another system (core/export/'s workflows and manifests, with
 * core/pod/'s Kubernetes objects): the helpers these are written with,
 * the one style a string is written in, and a comment line. Like libyaml, each helper returns 1 on success and
 * 0 on failure, and the event is gone either way. Needs libyaml and nothing of the core but
 * base/util.h.
 *
 * Spec text lands in these files: export/quote.h lists every place it
 * lands in and the one way it is written there. */
#ifndef TPUCI_BASE_EMIT_H
#define TPUCI_BASE_EMIT_H

#include <yaml.h>

#include "base/util.h"

/* A yaml_write_handler_t appending to the tpuci__buf_t in `data`. */
int tpuci__emit_write(void *data, unsigned char *buf, size_t size);
/* A scalar in the given style (libyaml picks another when the text
 * cannot be written in it). */
int tpuci__emit_scalar(yaml_emitter_t *e, const char *s, yaml_scalar_style_t style);
/* A string, in the style tpuci__quote_yaml_style() picks: every YAML
 * reader, 1.1 or 1.2, reads it back as the same string. */
int tpuci__emit_str(yaml_emitter_t *e, const char *s);
/* A plain scalar as it is: keys, numbers and booleans. */
int tpuci__emit_plain(yaml_emitter_t *e, const char *s);
/* Block mappings and sequences, and their ends. */
int tpuci__emit_map(yaml_emitter_t *e);
int tpuci__emit_map_end(yaml_emitter_t *e);
int tpuci__emit_seq(yaml_emitter_t *e, yaml_sequence_style_t style);
int tpuci__emit_seq_end(yaml_emitter_t *e);
/* key: value, the key plain, the value a string (tpuci__emit_str). */
int tpuci__emit_kv(yaml_emitter_t *e, const char *key, const char *value);

/* Appends "# TEXT\n" ("#\n" for ""): every line break of YAML 1.1 or 1.2
 * (LF, CR, U+0085, U+2028, U+2029), every other character a YAML stream
 * may not hold or a terminal would act on (C0 and C1 controls, DEL, a
 * byte order mark, U+FFFE, U+FFFF) and every byte that is not UTF-8
 * becomes one '?'. */
void tpuci__quote_comment(tpuci__buf_t *out, const char *text);

/* The style a string is emitted in: double quotes when it holds a CR,
 * U+0085, U+2028 or U+2029 (libyaml writes them as escapes there; in a
 * block scalar a 1.1 and a 1.2 reader would read them apart) or when a
 * plain scalar would read back as something else (tpuci__yaml_ambiguous:
 * `3.10`, `on`, `null`); a literal block for other multi-line text; else
 * plain, which libyaml changes to quotes itself where plain cannot hold
 * the text (`: `, ` #`, a leading indicator). */
yaml_scalar_style_t tpuci__quote_yaml_style(const char *s);

#endif /* TPUCI_BASE_EMIT_H */
