// OpenBLAS's CBLAS interface: matrix multiplies for the engine (LoupeTensor only).
#ifndef LOUPE_COPENBLAS_SHIM_H
#define LOUPE_COPENBLAS_SHIM_H
#include <cblas.h>
#endif
