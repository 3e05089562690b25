/* YAML out with libyaml's emitter (emit.h): the helpers, a string's
 * style and a comment line. */
#include "base/emit.h"

#include <limits.h>
#include <string.h>

/* The length of the UTF-8 character at p (1 for ASCII), or 0 when the
 * bytes there are not one. */
static size_t tpuci__q_char(const unsigned char *p, const unsigned char *end) {
  return *p < 0x80 ? 1 : tpuci__utf8_len(p, end);
}

/* Whether the n-byte character at p is a line break to some YAML reader
 * other than LF: CR, U+0085 (NEL), U+2028, U+2029. */
static int tpuci__q_break(const unsigned char *p, size_t n) {
  return (n == 1 && *p == '\r') || (n == 2 && p[0] == 0xc2 && p[1] == 0x85) ||
         (n == 3 && p[0] == 0xe2 && p[1] == 0x80 && (p[2] == 0xa8 || p[2] == 0xa9));
}

void tpuci__quote_comment(tpuci__buf_t *out, const char *text) {
  const unsigned char *p = (const unsigned char *) text, *end = p + strlen(text);
  tpuci__buf_adds(out, *text ? "# " : "#");
  while (p < end) {
    size_t n = tpuci__q_char(p, end);
    int bad = n == 0 || (n == 1 && (*p < 0x20 || *p == 0x7f)) ||
              (n == 2 && p[0] == 0xc2 && p[1] < 0xa0) || tpuci__q_break(p, n) ||
              (n == 3 && p[0] == 0xef && p[1] == 0xbb && p[2] == 0xbf) ||
              (n == 3 && p[0] == 0xef && p[1] == 0xbf && p[2] >= 0xbe);
    if (bad) tpuci__buf_add(out, "?", 1);
    else tpuci__buf_add(out, (const char *) p, n);
    p += n ? n : 1;
  }
  tpuci__buf_adds(out, "\n");
}

yaml_scalar_style_t tpuci__quote_yaml_style(const char *s) {
  const unsigned char *p = (const unsigned char *) s, *end = p + strlen(s);
  while (p < end) {
    size_t n = tpuci__q_char(p, end);
    if (tpuci__q_break(p, n)) return YAML_DOUBLE_QUOTED_SCALAR_STYLE;
    p += n ? n : 1;
  }
  if (strchr(s, '\n') != NULL) return YAML_LITERAL_SCALAR_STYLE;
  return tpuci__yaml_ambiguous(s) ? YAML_DOUBLE_QUOTED_SCALAR_STYLE : YAML_PLAIN_SCALAR_STYLE;
}

int tpuci__emit_write(void *data, unsigned char *buf, size_t size) {
  tpuci__buf_add(data, (const char *) buf, size);
  return 1;
}

int tpuci__emit_scalar(yaml_emitter_t *e, const char *s, yaml_scalar_style_t style) {
  yaml_event_t ev;
  size_t len = strlen(s);
  if (len > INT_MAX) return 0;
  if (!yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *) s, (int) len, 1, 1, style))
    return 0;
  return yaml_emitter_emit(e, &ev);
}

/* A string, in the style every YAML reader reads back alike. */
int tpuci__emit_str(yaml_emitter_t *e, const char *s) {
  return tpuci__emit_scalar(e, s, tpuci__quote_yaml_style(s));
}

/* A scalar written as it is: keys and booleans such as "false". */
int tpuci__emit_plain(yaml_emitter_t *e, const char *s) {
  return tpuci__emit_scalar(e, s, YAML_PLAIN_SCALAR_STYLE);
}

int tpuci__emit_map(yaml_emitter_t *e) {
  yaml_event_t ev;
  if (!yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE)) return 0;
  return yaml_emitter_emit(e, &ev);
}

int tpuci__emit_map_end(yaml_emitter_t *e) {
  yaml_event_t ev;
  if (!yaml_mapping_end_event_initialize(&ev)) return 0;
  return yaml_emitter_emit(e, &ev);
}

int tpuci__emit_seq(yaml_emitter_t *e, yaml_sequence_style_t style) {
  yaml_event_t ev;
  if (!yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, style)) return 0;
  return yaml_emitter_emit(e, &ev);
}

int tpuci__emit_seq_end(yaml_emitter_t *e) {
  yaml_event_t ev;
  if (!yaml_sequence_end_event_initialize(&ev)) return 0;
  return yaml_emitter_emit(e, &ev);
}

/* key: value, the key plain, the value a string. */
int tpuci__emit_kv(yaml_emitter_t *e, const char *key, const char *value) {
  return tpuci__emit_plain(e, key) && tpuci__emit_str(e, value);
}
