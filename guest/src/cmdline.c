/* guest/src/cmdline.c - kernel command line token parsing. */
#include "cmdline.h"
#include "lib.h"

static bool is_sep(char c)
{
    return c == ' ' || c == '\t' || c == '\n';
}

/* Iterate tokens: returns start of the next token at/after *pos and its length. */
static const char *next_token(const char **pos, size_t *len)
{
    const char *p = *pos, *start;

    while (*p && is_sep(*p))
        p++;
    if (!*p)
        return NULL;
    start = p;
    while (*p && !is_sep(*p))
        p++;
    *len = (size_t)(p - start);
    *pos = p;
    return start;
}

bool cmdline_has(const char *cmdline, const char *key)
{
    size_t klen = strlen(key), tlen;
    const char *pos = cmdline ? cmdline : "", *tok;

    while ((tok = next_token(&pos, &tlen)))
        if (tlen == klen && !memcmp(tok, key, klen))
            return true;
    return false;
}

const char *cmdline_get(const char *cmdline, const char *key, size_t *len)
{
    size_t klen = strlen(key), tlen;
    const char *pos = cmdline ? cmdline : "", *tok, *val = NULL;

    while ((tok = next_token(&pos, &tlen))) {
        if (tlen > klen && tok[klen] == '=' && !memcmp(tok, key, klen)) {
            val = tok + klen + 1;
            *len = tlen - klen - 1;
        }
    }
    return val;
}

int cmdline_get_uint(const char *cmdline, const char *key, unsigned long max,
                     unsigned long *out)
{
    size_t len, i;
    const char *val = cmdline_get(cmdline, key, &len);
    unsigned long v = 0;

    if (!val)
        return 0;
    if (len == 0)
        return -1;
    for (i = 0; i < len; i++) {
        unsigned int d = (unsigned char)val[i] - '0';
        if (d > 9 || d > max || v > (max - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 1;
}

int cmdline_pick_list(const char *s, size_t len, const char *const *names, unsigned int nnames,
                      unsigned char *out, unsigned int max)
{
    size_t i = 0;
    unsigned int count = 0;

    while (i <= len) {
        size_t j = i, n;
        unsigned int w;

        while (j < len && s[j] != ',')
            j++;
        n = j - i;
        for (w = 0; w < nnames; w++)
            if (strlen(names[w]) == n && !memcmp(s + i, names[w], n))
                break;
        if (w == nnames || count == max)
            return -1;
        out[count++] = (unsigned char)w;
        i = j + 1;
    }
    return (int)count;
}
