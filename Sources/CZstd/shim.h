// zstd: zip method 93 members (Inspect AI .eval logs from 0.3.206).
#ifndef LOUPE_CZSTD_SHIM_H
#define LOUPE_CZSTD_SHIM_H
#include <zstd.h>
#endif
