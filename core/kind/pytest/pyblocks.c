/* The top-level functions of Python source (pyblocks.h): a tokenizer
 * that reads only as much of Python as lines and indentation need
 * (strings, comments, brackets, continuations), logical lines built from
 * its tokens, and a stack of indentation levels that says which defs are
 * blocks and names them. */
#include <stdlib.h>
#include <string.h>

#include "base/idmap.h"
#include "base/util.h"
#include "kind/pytest/pyblocks.h"

/* Python's own limits: levels of indentation (the tokenizer's
 * MAXINDENT) and f-strings nested in f-strings. */
#define MAX_INDENT 100
#define MAX_NEST 32

/* ------------------------------------------------------------------ */
/* Tokens                                                              */

enum { T_END, T_NEWLINE, T_NAME, T_OP, T_OTHER };

typedef struct {
  int type;
  char op;           /* T_OP: ':', '@', ';', or '}' closing an f-string field */
  int line;          /* the line it starts on */
  size_t start, end; /* its bytes */
} tok_t;

typedef struct {
  const char *s;
  size_t len, pos;
  int line; /* the line of s[pos] */
} lexer_t;

/* A string literal being read. */
typedef struct {
  char quote;
  int triple, fmt, raw;
} str_t;

static int next_tok(lexer_t *lx, int *depth, int level, tok_t *t);

static int is_name_char(unsigned char c) {
  return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c >= 0x80;
}

/* What the name [p, p + n) says of the string it prefixes: a bit set of
 * 1 (f or t: formatted) and 2 (r: raw), or -1 when it is no prefix. */
static int prefix_flags(const char *p, size_t n) {
  int flags = 0, other = 0;
  size_t i;
  if (n == 0 || n > 2) return -1;
  for (i = 0; i < n; i++) {
    switch (p[i] | 0x20) {
      case 'r': flags |= 2; break;
      case 'f':
      case 't': flags |= 1, other++; break;
      case 'b': other++; break;
      case 'u':
        if (n != 1) return -1;
        break;
      default: return -1;
    }
  }
  if (n == 2 && !((flags & 2) && other == 1)) return -1; /* rb, fr, rt, ... */
  return flags;
}

/* Skips a backslash at lx->pos and the character it escapes (a line end
 * as one). */
static void skip_escape(lexer_t *lx) {
  lx->pos++;
  if (lx->pos < lx->len && lx->s[lx->pos] == '\r') lx->pos++;
  if (lx->pos >= lx->len) return;
  if (lx->s[lx->pos] == '\n') lx->line++;
  lx->pos++;
}

/* Reads an f-string's replacement field, whose '{' was just read, up to
 * and with its closing '}': an expression, then maybe a format spec. */
static int skip_field(lexer_t *lx, const str_t *k, int level);

/* Reads the literal part of a string up to and with its closing quote,
 * or (spec) of a format spec up to and with the '}' closing its field. */
static int skip_literal(lexer_t *lx, const str_t *k, int level, int spec) {
  const char *s = lx->s;
  while (lx->pos < lx->len) {
    char c = s[lx->pos];
    if (c == '\\' && k->fmt && lx->pos + 1 < lx->len &&
        (s[lx->pos + 1] == '{' || s[lx->pos + 1] == '}')) {
      lx->pos++; /* the brace is still a field's */
    } else if (c == '\\') {
      skip_escape(lx);
    } else if (c == '\n') {
      if (!k->triple) return -1;
      lx->line++, lx->pos++;
    } else if (c == k->quote && (!k->triple || (lx->pos + 2 < lx->len && s[lx->pos + 1] == c &&
                                                s[lx->pos + 2] == c))) {
      if (spec) return -1; /* the string ends inside a field */
      lx->pos += k->triple ? 3 : 1;
      return 0;
    } else if (c == '{' && k->fmt) {
      if (!spec && lx->pos + 1 < lx->len && s[lx->pos + 1] == '{') {
        lx->pos += 2;
      } else {
        lx->pos++;
        if (level >= MAX_NEST || skip_field(lx, k, level + 1) != 0) return -1;
      }
    } else if (c == '}' && spec) {
      lx->pos++;
      return 0;
    } else {
      lx->pos++;
    }
  }
  return -1;
}

static int skip_field(lexer_t *lx, const str_t *k, int level) {
  int depth = 0;
  tok_t t;
  for (;;) {
    if (next_tok(lx, &depth, level, &t) != 0) return -1;
    if (t.type == T_OP && t.op == '}') return 0;
    if (t.type == T_OP && t.op == ':' && depth == 0) return skip_literal(lx, k, level, 1);
  }
}

/* Reads a string literal whose opening quote is at lx->pos. */
static int skip_string(lexer_t *lx, int flags, int level) {
  str_t k;
  const char *s = lx->s;
  k.quote = s[lx->pos];
  k.triple = lx->pos + 2 < lx->len && s[lx->pos + 1] == k.quote && s[lx->pos + 2] == k.quote;
  k.fmt = flags & 1;
  k.raw = (flags & 2) != 0;
  lx->pos += k.triple ? 3 : 1;
  return skip_literal(lx, &k, level, 0);
}

/* Skips white space, comments and backslash continuations, and line
 * ends inside brackets or an f-string's field (level > 0). Returns 1 at
 * a line end that ends a logical line, 0 at a token, -1 for a backslash
 * that continues nothing. */
static int skip_space(lexer_t *lx, int depth, int level) {
  const char *s = lx->s;
  while (lx->pos < lx->len) {
    char c = s[lx->pos];
    if (c == ' ' || c == '\t' || c == '\f' || c == '\r') {
      lx->pos++;
    } else if (c == '#') {
      while (lx->pos < lx->len && s[lx->pos] != '\n') lx->pos++;
    } else if (c == '\\') {
      lx->pos++;
      if (lx->pos < lx->len && s[lx->pos] == '\r') lx->pos++;
      if (lx->pos >= lx->len || s[lx->pos] != '\n') return -1;
      lx->line++, lx->pos++;
    } else if (c == '\n') {
      if (depth == 0 && level == 0) return 1;
      lx->line++, lx->pos++;
    } else {
      return 0;
    }
  }
  return 0;
}

/* Reads the next token. depth counts the open brackets of the logical
 * line (or of the f-string field, level > 0), where a line end is no
 * token. A '}' closing the field is T_OP '}'. */
static int next_tok(lexer_t *lx, int *depth, int level, tok_t *t) {
  const char *s = lx->s;
  int r = skip_space(lx, *depth, level);
  char c;
  if (r < 0) return -1;
  t->line = lx->line;
  t->start = lx->pos;
  t->type = T_OTHER;
  if (r == 1) {
    lx->line++, lx->pos++;
    t->type = T_NEWLINE;
    return 0;
  }
  if (lx->pos >= lx->len) {
    t->type = T_END;
    return *depth == 0 && level == 0 ? 0 : -1;
  }
  c = s[lx->pos];
  if (is_name_char((unsigned char) c) && !(c >= '0' && c <= '9')) {
    int flags;
    while (lx->pos < lx->len && is_name_char((unsigned char) s[lx->pos])) lx->pos++;
    t->end = lx->pos;
    flags = prefix_flags(s + t->start, t->end - t->start);
    if (lx->pos < lx->len && (s[lx->pos] == '"' || s[lx->pos] == '\'') && flags >= 0)
      return skip_string(lx, flags, level);
    t->type = T_NAME;
    return 0;
  }
  if ((c >= '0' && c <= '9') ||
      (c == '.' && lx->pos + 1 < lx->len && s[lx->pos + 1] >= '0' && s[lx->pos + 1] <= '9')) {
    while (lx->pos < lx->len && (is_name_char((unsigned char) s[lx->pos]) || s[lx->pos] == '.'))
      lx->pos++;
    return 0;
  }
  if (c == '"' || c == '\'') return skip_string(lx, 0, level);
  lx->pos++;
  if (c == '(' || c == '[' || c == '{') {
    ++*depth;
  } else if (c == ')' || c == ']' || c == '}') {
    if (*depth > 0) {
      --*depth;
    } else if (c == '}' && level > 0) {
      t->type = T_OP, t->op = '}';
    } else {
      return -1;
    }
  } else if (c == ':' && lx->pos < lx->len && s[lx->pos] == '=' && !(level > 0 && *depth == 0)) {
    lx->pos++; /* := (in a field, "{x:=^9}" is a format spec) */
  } else if (c == ':' || c == '@' || c == ';') {
    t->type = T_OP, t->op = c;
  }
  return 0;
}

static int tok_is(const lexer_t *lx, const tok_t *t, const char *word) {
  size_t n = strlen(word);
  return t->type == T_NAME && t->end - t->start == n && memcmp(lx->s + t->start, word, n) == 0;
}

/* ------------------------------------------------------------------ */
/* Logical lines                                                       */

enum { L_OTHER, L_DECO, L_DEF, L_CLASS };

typedef struct {
  int col;         /* its indentation, tabs to the next multiple of 8 */
  int first, last; /* the lines of its first and its last token */
  int kind;
  tok_t name; /* L_DEF, L_CLASS: the name */
  int opens;  /* it ends with ':': an indented suite follows */
} logical_t;

/* The indentation of the line at lx->pos, as Python's tokenizer counts
 * it. */
static int indentation(const lexer_t *lx) {
  size_t p;
  int col = 0;
  for (p = lx->pos; p < lx->len; p++) {
    if (lx->s[p] == ' ') col++;
    else if (lx->s[p] == '\t') col = (col / 8 + 1) * 8;
    else if (lx->s[p] == '\f') col = 0;
    else break;
  }
  return col;
}

/* What a logical line whose first tokens are head[0..n) is. */
static void classify(const lexer_t *lx, const tok_t *head, int n, logical_t *ll) {
  int at = 0;
  ll->kind = L_OTHER;
  if (n >= 1 && head[0].type == T_OP && head[0].op == '@') ll->kind = L_DECO;
  if (n >= 2 && tok_is(lx, &head[0], "async") && tok_is(lx, &head[1], "def")) at = 1;
  if (n >= at + 2 && head[at + 1].type == T_NAME) {
    if (tok_is(lx, &head[at], "def")) ll->kind = L_DEF;
    if (tok_is(lx, &head[at], "class") && at == 0) ll->kind = L_CLASS;
    ll->name = head[at + 1];
  }
}

/* Reads the next logical line that has a token: 1, 0 at the end of the
 * text, -1 when the text cannot be read. */
static int next_logical(lexer_t *lx, logical_t *ll) {
  tok_t head[3], t;
  int depth = 0, n;
  for (;;) {
    memset(ll, 0, sizeof *ll);
    ll->col = indentation(lx);
    for (n = 0;; n++) {
      if (next_tok(lx, &depth, 0, &t) != 0) return -1;
      if (t.type == T_NEWLINE || t.type == T_END) break;
      if (n < 3) head[n] = t;
      if (n == 0) ll->first = t.line;
      ll->last = lx->line;
      ll->opens = t.type == T_OP && t.op == ':' && depth == 0;
    }
    if (n > 0) {
      classify(lx, head, n < 3 ? n : 3, ll);
      return 1;
    }
    if (t.type == T_END) return 0;
  }
}

/* ------------------------------------------------------------------ */
/* Scopes and blocks                                                   */

enum { S_MODULE, S_CLASS, S_DEF, S_OTHER };

typedef struct {
  int col;
  int kind;
  int in_def;  /* it is a function's, or inside one */
  size_t path; /* the class path's length outside it */
  long block;  /* S_DEF: its block's index, or -1 */
  tok_t name;  /* S_CLASS: its name */
} scope_t;

typedef struct {
  lexer_t lx;
  scope_t stack[MAX_INDENT];
  int depth;
  scope_t next;        /* the scope the suite of the last line opens */
  int opened;          /* the last logical line opens a suite */
  int last;            /* the last line of the last logical line */
  int deco;            /* the first line of the decorators to come, or 0 */
  tpuci__buf_t path;   /* the enclosing classes: "Outer.Inner." */
  tpuci__idmap_t seen; /* a name -> the index of its first block */
  int *count;          /* at a name's first block: how often it came */
  tpuci__pyblock_t *blocks;
  size_t n, cap;
} scan_t;

static void push(scan_t *sc, int col) {
  scope_t *sp = &sc->stack[sc->depth++];
  *sp = sc->next;
  sp->col = col;
  sp->in_def = sp->kind == S_DEF || sp[-1].in_def;
  sp->path = sc->path.len;
  if (sp->kind == S_CLASS) {
    tpuci__buf_add(&sc->path, sc->lx.s + sp->name.start, sp->name.end - sp->name.start);
    tpuci__buf_add(&sc->path, ".", 1);
  }
}

/* Closes the innermost scope: a block ends with the last line read. */
static void pop(scan_t *sc) {
  scope_t *sp = &sc->stack[--sc->depth];
  if (sp->kind == S_DEF && sp->block >= 0) sc->blocks[sp->block].last = sc->last;
  sc->path.len = sp->path;
  if (sc->path.data) sc->path.data[sp->path] = '\0';
}

/* Enters or leaves scopes for a logical line at indentation col, as
 * Python's INDENT and DEDENT tokens do. */
static int indent(scan_t *sc, int col) {
  if (sc->opened) {
    if (col <= sc->stack[sc->depth - 1].col || sc->depth == MAX_INDENT) return -1;
    push(sc, col);
    return 0;
  }
  while (col < sc->stack[sc->depth - 1].col) pop(sc);
  return col == sc->stack[sc->depth - 1].col ? 0 : -1;
}

/* Adds the block of a def named name whose suite starts on line body.
 * Returns its index, or -1 when its name is too long. */
static long add_block(scan_t *sc, const tok_t *name, int first, int body) {
  tpuci__pyblock_t *b;
  size_t len = sc->path.len + (name->end - name->start), prev;
  char *base;
  if (len > TPUCI__PYBLOCKS_MAX_NAME) return -1;
  if (sc->n == sc->cap) {
    sc->cap = sc->cap ? sc->cap * 2 : 16;
    sc->blocks = tpuci__realloc(sc->blocks, sc->cap * sizeof *sc->blocks);
    sc->count = tpuci__realloc(sc->count, sc->cap * sizeof *sc->count);
  }
  base = tpuci__printf("%s%.*s", sc->path.data ? sc->path.data : "",
                       (int) (name->end - name->start), sc->lx.s + name->start);
  b = &sc->blocks[sc->n];
  memset(b, 0, sizeof *b);
  b->first = first;
  b->body = body;
  sc->count[sc->n] = 1;
  prev = tpuci__idmap_get(&sc->seen, base);
  if (prev == TPUCI__IDMAP_NONE) {
    b->name = base;
    tpuci__idmap_put(&sc->seen, b->name, sc->n);
  } else {
    b->name = tpuci__printf("%s#%d", base, ++sc->count[prev]);
    free(base);
  }
  return (long) sc->n++;
}

/* Takes in one logical line. */
static int on_line(scan_t *sc, const logical_t *ll) {
  int first, depth = sc->depth;
  if (indent(sc, ll->col) != 0) return -1;
  if (sc->depth != depth) sc->deco = 0; /* decorators of another level */
  first = sc->deco ? sc->deco : ll->first;
  memset(&sc->next, 0, sizeof sc->next);
  sc->next.kind = S_OTHER;
  sc->next.block = -1;
  if (ll->kind == L_DECO) {
    if (!sc->deco) sc->deco = ll->first;
  } else {
    sc->deco = 0;
  }
  if (ll->kind == L_CLASS) {
    sc->next.kind = S_CLASS;
    sc->next.name = ll->name;
  } else if (ll->kind == L_DEF) {
    sc->next.kind = S_DEF;
    if (ll->opens && !sc->stack[sc->depth - 1].in_def) {
      sc->next.block = add_block(sc, &ll->name, first, ll->last + 1);
      if (sc->next.block < 0) return -1;
    }
  }
  sc->opened = ll->opens;
  sc->last = ll->last;
  return 0;
}

/* The offsets where the lines of text start: (*starts)[i] is line i + 1's.
 * Returns the number of entries, one more than the line ends, or -1 for
 * a NUL byte, a lone CR or over TPUCI__PYBLOCKS_MAX_LINES line ends. */
static long index_lines(const char *text, size_t len, size_t **starts) {
  size_t i, n = 1, cap = 1024;
  *starts = tpuci__malloc(cap * sizeof **starts);
  (*starts)[0] = 0;
  for (i = 0; i < len; i++) {
    if (text[i] == '\0' || (text[i] == '\r' && (i + 1 == len || text[i + 1] != '\n'))) return -1;
    if (text[i] != '\n') continue;
    if (n > TPUCI__PYBLOCKS_MAX_LINES) return -1;
    if (n == cap) *starts = tpuci__realloc(*starts, (cap *= 2) * sizeof **starts);
    (*starts)[n++] = i + 1;
  }
  return (long) n;
}

/* Hashes each block's body and, into out->top, what is outside them. */
static void hash_blocks(const char *text, size_t len, const size_t *starts, long lines,
                        tpuci__pyblocks_t *out) {
  tpuci__buf_t top;
  size_t i, at = 0;
  tpuci__buf_init(&top);
  for (i = 0; i < out->n; i++) {
    tpuci__pyblock_t *b = &out->blocks[i];
    size_t from = starts[b->body - 1], to = b->last < lines ? starts[b->last] : len;
    tpuci__sha256_hex(text + from, to - from, b->hash);
    tpuci__buf_add(&top, text + at, from - at);
    at = to;
  }
  tpuci__buf_add(&top, text + at, len - at);
  tpuci__sha256_hex(top.data ? top.data : "", top.len, out->top);
  tpuci__buf_free(&top);
}

/* Reads every logical line into sc's blocks. */
static int scan_lines(scan_t *sc) {
  logical_t ll;
  int r;
  if (sc->lx.len >= 3 && memcmp(sc->lx.s, "\xef\xbb\xbf", 3) == 0) sc->lx.pos = 3;
  while ((r = next_logical(&sc->lx, &ll)) == 1)
    if (on_line(sc, &ll) != 0) return -1;
  if (r < 0 || sc->opened) return -1;
  while (sc->depth > 1) pop(sc);
  return 0;
}

int tpuci__pyblocks_scan(const char *text, size_t len, tpuci__pyblocks_t *out) {
  scan_t sc;
  size_t *starts;
  long lines = index_lines(text, len, &starts);
  size_t i;
  int r = -1;

  memset(out, 0, sizeof *out);
  memset(&sc, 0, sizeof sc);
  sc.lx.s = text;
  sc.lx.len = len;
  sc.lx.line = 1;
  sc.depth = 1;
  sc.stack[0].kind = S_MODULE;
  sc.stack[0].block = -1;
  tpuci__buf_init(&sc.path);
  tpuci__idmap_init(&sc.seen);
  if (lines > 0) r = scan_lines(&sc);
  tpuci__idmap_free(&sc.seen);
  tpuci__buf_free(&sc.path);
  free(sc.count);
  if (r == 0) {
    out->blocks = sc.blocks;
    out->n = sc.n;
    hash_blocks(text, len, starts, lines, out);
  } else {
    for (i = 0; i < sc.n; i++) free(sc.blocks[i].name);
    free(sc.blocks);
    tpuci__sha256_hex(len ? text : "", len, out->top);
  }
  free(starts);
  return r;
}

void tpuci__pyblocks_free(tpuci__pyblocks_t *b) {
  size_t i;
  for (i = 0; i < b->n; i++) free(b->blocks[i].name);
  free(b->blocks);
  b->blocks = NULL;
  b->n = 0;
}

const tpuci__pyblock_t *tpuci__pyblocks_at(const tpuci__pyblocks_t *b, int line) {
  size_t lo = 0, hi = b->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (b->blocks[mid].last < line) lo = mid + 1;
    else hi = mid;
  }
  return lo < b->n && b->blocks[lo].first <= line ? &b->blocks[lo] : NULL;
}

const tpuci__pyblock_t *tpuci__pyblocks_find(const tpuci__pyblocks_t *b, const char *name) {
  size_t i;
  for (i = 0; i < b->n; i++)
    if (strcmp(b->blocks[i].name, name) == 0) return &b->blocks[i];
  return NULL;
}
