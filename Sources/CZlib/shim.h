// zlib: raw-deflate members of zip archives (Inspect AI .eval logs up to 0.3.205).
#ifndef LOUPE_CZLIB_SHIM_H
#define LOUPE_CZLIB_SHIM_H
#include <zlib.h>
#endif
