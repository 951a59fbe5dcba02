// siwx-copy-crc-bench: what the MPA CRC costs the sender on this machine's
// own CPU, outside any emulator. siwx's send path copies each FPDU's
// octets into a stage page and, with CRCs, computes the CRC over the copy
// chunk by chunk while it is in the cache (kernel/siwx_tx_fpdu.c,
// siwx_tx_stage()); without CRCs it only copies. The guests of
// tools/bench run under QEMU's TCG, which executes the CPU's CRC32
// instruction a bit at a time, so there the CRC costs far more than it
// does on hardware (docs/performance.md). This program times, natively:
//   copy        the copy alone, from a large source into a ring of pages
//   copy+table  the copy and the protocol core's table code per chunk
//   copy+insn   the copy and the CRC32 instruction per chunk, one stream
//   copy+insn3  the same in three interleaved streams, then combined, as
//               the kernel's crc32c() does for longer buffers (its x86
//               code, crc32c-intel, from 512 octets on): the instruction
//               takes 3 cycles and can start one each cycle
// and prints each mode's rate and its ratio to the copy's: the sender's
// rate with CRCs against without, were it doing nothing but this.
//
// Before timing it checks that the table code and the instruction agree
// (RFC 3720's vector, and random buffers of every length up to 64), and
// exits 1 if they do not.
//
//   siwx-copy-crc-bench [-s MIB] [-c CHUNK] [-r ROUNDS]
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

extern "C" {
#include <siwx/proto/crc32c.h>
}

namespace {

constexpr size_t kPage = 4096;
// The stage's pool keeps up to 1024 pages a connection (kernel/siwx_conn.h)
constexpr size_t kStagePages = 1024;

#if defined(__x86_64__)
bool HaveInsn() { return __builtin_cpu_supports("sse4.2"); }

__attribute__((target("sse4.2"))) uint32_t CrcInsn(uint32_t crc, const uint8_t* p, size_t n) {
    uint64_t c = crc;
    for (; n >= 8; p += 8, n -= 8) {
        uint64_t v;
        std::memcpy(&v, p, sizeof(v));
        c = _mm_crc32_u64(c, v);
    }
    auto c32 = static_cast<uint32_t>(c);
    for (; n; --n) c32 = _mm_crc32_u8(c32, *p++);
    return c32;
}
// Three streams of gStreamLen octets each; the register moves past a stream
// of zeros by gShift (a linear map: no pre- or post-inversion), so
// crc(A B C) = shift(shift(crc(A)) ^ crc(B)) ^ crc(C).
size_t gStreamLen;
uint32_t gShift[4][256];

void InitInsn3(size_t chunk) {
    gStreamLen = chunk / 3 / 8 * 8;
    const std::vector<uint8_t> zeros(gStreamLen);
    for (int k = 0; k < 4; k++)
        for (uint32_t b = 0; b < 256; b++)
            gShift[k][b] = CrcInsn(b << (8 * k), zeros.data(), zeros.size());
}

uint32_t Shift(uint32_t c) {
    return gShift[0][c & 0xff] ^ gShift[1][(c >> 8) & 0xff] ^ gShift[2][(c >> 16) & 0xff] ^
           gShift[3][c >> 24];
}

__attribute__((target("sse4.2"))) uint32_t CrcInsn3(uint32_t crc, const uint8_t* p, size_t n) {
    const size_t len = gStreamLen;
    if (!len || n < 3 * len) return CrcInsn(crc, p, n);
    uint64_t a = crc, b = 0, c = 0;
    for (size_t i = 0; i < len; i += 8) {
        uint64_t va, vb, vc;
        std::memcpy(&va, p + i, 8);
        std::memcpy(&vb, p + len + i, 8);
        std::memcpy(&vc, p + 2 * len + i, 8);
        a = _mm_crc32_u64(a, va);
        b = _mm_crc32_u64(b, vb);
        c = _mm_crc32_u64(c, vc);
    }
    const uint32_t r = Shift(Shift(static_cast<uint32_t>(a)) ^ static_cast<uint32_t>(b)) ^
                       static_cast<uint32_t>(c);
    return CrcInsn(r, p + 3 * len, n - 3 * len);
}
#else
bool HaveInsn() { return false; }
uint32_t CrcInsn(uint32_t crc, const uint8_t*, size_t) { return crc; }
void InitInsn3(size_t) {}
uint32_t CrcInsn3(uint32_t crc, const uint8_t*, size_t) { return crc; }
#endif

using CrcFn = uint32_t (*)(uint32_t, const uint8_t*, size_t);

uint32_t CrcTable(uint32_t crc, const uint8_t* p, size_t n) { return siwx_crc32c_sw(crc, p, n); }

// The two codes must compute the same register, or the timing means nothing
bool CodesAgree(size_t chunk) {
    const uint8_t zeros[32] = {};
    // RFC 3720 B.4: 32 zero octets give aa 36 91 8a on the wire (LSB first)
    if (siwx_crc32c_final(CrcTable(SIWX_CRC32C_INIT, zeros, sizeof(zeros))) != 0x8a9136aaU) {
        std::fprintf(stderr, "table code: wrong CRC of RFC 3720's 32 zero octets\n");
        return false;
    }
    if (!HaveInsn()) return true;
    std::mt19937 rng(1);
    std::vector<uint8_t> buf(chunk + 64);
    for (auto& b : buf) b = static_cast<uint8_t>(rng());
    for (size_t len = 0; len <= buf.size(); len += len < 64 ? 1 : chunk - 64) {
        const uint32_t seed = rng();
        const uint32_t want = CrcTable(seed, buf.data(), len);
        if (CrcInsn(seed, buf.data(), len) != want || CrcInsn3(seed, buf.data(), len) != want) {
            std::fprintf(stderr, "table code and CRC32 instruction differ at length %zu\n", len);
            return false;
        }
    }
    return true;
}

// Copy @src into the stage ring @chunk octets at a time, each chunk into
// the CRC when @crc is set; returns GB/s of the best of @rounds passes.
double Rate(const std::vector<uint8_t>& src, std::vector<uint8_t>& stage, size_t chunk, CrcFn crc,
            int rounds, uint32_t* sink) {
    double best = 0;
    for (int r = 0; r < rounds; r++) {
        uint32_t reg = SIWX_CRC32C_INIT;
        size_t off = 0;
        const auto t0 = std::chrono::steady_clock::now();
        for (size_t i = 0; i < src.size(); i += chunk) {
            const size_t n = std::min(chunk, src.size() - i);
            if (off + n > stage.size()) off = 0;
            std::memcpy(&stage[off], &src[i], n);
            if (crc) reg = crc(reg, &stage[off], n);
            off += n;
        }
        const std::chrono::duration<double> dt = std::chrono::steady_clock::now() - t0;
        *sink ^= reg ^ stage[off / 2];
        best = std::max(best, static_cast<double>(src.size()) / dt.count() / 1e9);
    }
    return best;
}

void Usage() {
    std::fprintf(stderr, "usage: siwx-copy-crc-bench [-s MIB] [-c CHUNK] [-r ROUNDS]\n");
    std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
    size_t mib = 256;
    size_t chunk = 1448;
    int rounds = 5;
    for (int c; (c = getopt(argc, argv, "s:c:r:")) != -1;) {
        switch (c) {
            case 's':
                mib = std::strtoul(optarg, nullptr, 0);
                break;
            case 'c':
                chunk = std::strtoul(optarg, nullptr, 0);
                break;
            case 'r':
                rounds = std::atoi(optarg);
                break;
            default:
                Usage();
        }
    }
    if (!mib || !chunk || chunk > kPage * kStagePages || rounds < 1) Usage();
    siwx_crc32c_sw_init();
    if (HaveInsn()) InitInsn3(chunk);
    if (!CodesAgree(chunk)) return 1;

    std::vector<uint8_t> src(mib << 20);
    std::vector<uint8_t> stage(kPage * kStagePages);
    std::mt19937 rng(2);
    for (auto& b : src) b = static_cast<uint8_t>(rng());
    std::memset(stage.data(), 0, stage.size());

    uint32_t sink = 0;
    const double copy = Rate(src, stage, chunk, nullptr, rounds, &sink);
    const double table = Rate(src, stage, chunk, CrcTable, rounds, &sink);
    std::printf("%zu MiB in chunks of %zu octets, best of %d\n", mib, chunk, rounds);
    std::printf("copy        %6.2f GB/s\n", copy);
    std::printf("copy+table  %6.2f GB/s  %.2fx the copy's rate\n", table, table / copy);
    if (HaveInsn()) {
        const double insn = Rate(src, stage, chunk, CrcInsn, rounds, &sink);
        std::printf("copy+insn   %6.2f GB/s  %.2fx the copy's rate\n", insn, insn / copy);
        const double insn3 = Rate(src, stage, chunk, CrcInsn3, rounds, &sink);
        std::printf("copy+insn3  %6.2f GB/s  %.2fx the copy's rate\n", insn3, insn3 / copy);
    } else {
        std::printf("copy+insn   (no CRC32 instruction on this CPU)\n");
    }
    // Printed, so that the CRCs are not optimised away
    std::printf("(check value %08x)\n", sink);
    return 0;
}
