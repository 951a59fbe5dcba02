// The protocol core seen from C++ tests.
#pragma once

extern "C" {
#include <siwx/proto/bytes.h>
#include <siwx/proto/crc32c.h>
#include <siwx/proto/ddp.h>
#include <siwx/proto/mpa.h>
#include <siwx/proto/mpa_nego.h>
#include <siwx/proto/rdmap.h>
#include <siwx/proto/rdq.h>
#include <siwx/proto/recv.h>
#include <siwx/proto/rfc7306.h>
#include <siwx/proto/rx.h>
#include <siwx/proto/term.h>
#include <siwx/proto/tx.h>
}
