// The preload library builds with hidden visibility: only what is marked here leaves it (the
// interposed API symbols, the NVTX injection entry and the versioned C interface), and
// exports.map keeps everything else local even if a static dependency forgets to hide it.
#pragma once

#define SYNCOPATE_EXPORT __attribute__((visibility("default")))
