// GNU readline for `loupe repl`. Its configuration lives in C globals, which Swift 6 cannot
// assign directly, so the REPL sets them through these wrappers.
#ifndef LOUPE_CREADLINE_SHIM_H
#define LOUPE_CREADLINE_SHIM_H

#include <stdio.h>
#include <stdlib.h>
#include <readline/readline.h>
#include <readline/history.h>

static inline void loupe_rl_set_name(const char *name) { rl_readline_name = name; }
static inline void loupe_rl_set_completion(rl_completion_func_t *function) {
    rl_attempted_completion_function = function;
}
static inline void loupe_rl_set_word_breaks(const char *breaks) {
    rl_completer_word_break_characters = (char *)breaks;
}
static inline void loupe_rl_disable_filename_completion(void) { rl_attempted_completion_over = 1; }
static inline const char *loupe_rl_line_buffer(void) { return rl_line_buffer; }
static inline char **loupe_rl_matches(const char *text, rl_compentry_func_t *generator) {
    return rl_completion_matches(text, generator);
}

#endif
