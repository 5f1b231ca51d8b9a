// Placeholder until npy I/O lands.
#include "jaxpr/io/npy.h"
