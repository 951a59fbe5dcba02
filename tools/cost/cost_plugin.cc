// siwx's cost instrument: a QEMU TCG plugin (API version 1, QEMU 7.2) that
// counts the instructions a guest executes, and writes the counts each time
// the guest executes siwx's marker (x86_insn.h), so that a guest program
// can bracket a benchmark step (tools/cost/cost_mark.cc).
//
//   qemu-system-x86_64 -smp 1 -plugin libsiwx-cost.so,out=FILE[,classes=FILE][,profile=on] ...
//
// Counters: kernel instructions (addresses with the top bit set) split into
// the timer tick, the idle loop and the rest, the path; user instructions;
// and the iterations of REP string instructions, kernel and user, which
// QEMU 7.2 counts one instruction each (they are in the first counters
// too). The tick is every instruction from the timer interrupt's entry
// point to its IRETQ, whatever runs in between (its softirqs, a task it
// preempted to; interrupts and exceptions that come meanwhile, told by
// their entry points and IRETQs, nest), and the functions that classes=
// names as the tick's;
// the idle loop is the functions it names as such (address_classes.h).
// The rep counters leave the tick's out.
// Each marker appends a line
//   mark ID SEQ NS path=N tick=N idle=N user=N krep=N urep=N
// (SEQ: markers so far, NS: the host's monotonic clock) and, with
// profile=on, a line "tb VADDR INSNS EXECS" per translation block executed
// since the previous marker and a line "rep INSN RET1,RET2,... ITERATIONS"
// per kernel REP string instruction and the return addresses of the calls
// open when its iterations ran (call_stacks.h; innermost first, at most
// kChainDepth); the host symbolizes those
// (tools/bench/siwxbench/cost_profile.py).
//
// The counters are added inline by translated code without atomics, as
// API 1 offers them: the plugin refuses guests of more than one vCPU.
#include <algorithm>
#include <array>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <string>
#include <unordered_map>

#include "address_classes.h"
#include "call_stacks.h"
#include "qemu_plugin_v1.h"
#include "x86_insn.h"

extern "C" {
__attribute__((visibility("default"))) int qemu_plugin_version = kQemuPluginApiVersion;
__attribute__((visibility("default"))) int qemu_plugin_install(qemu_plugin_id_t id,
                                                               const qemu_info_t* info, int argc,
                                                               char** argv);
}

namespace {

using siwx_cost::AddressClass;

enum Counter { kPath, kTick, kIdle, kUser, kRepKernel, kRepUser, kCounters };
const char* const kCounterNames[kCounters] = {"path", "tick", "idle", "user", "krep", "urep"};

// One translation block's execution count, for profile=on.
struct Block {
    uint64_t vaddr;
    uint32_t insns;
    uint64_t execs = 0;
    uint64_t dumped = 0;  // execs at the last marker
};

// A kernel REP instruction and the calls open, for profile=on.
constexpr size_t kChainDepth = 12;
using Chain = std::array<uint64_t, kChainDepth + 1>;  // the instruction, then return addresses
struct Counted {
    uint64_t n = 0;
    uint64_t dumped = 0;  // n at the last marker
};

struct State {
    uint64_t counts[kCounters] = {};
    // While the timer interrupt runs: the counts when it came in, and
    // how many interrupts or exceptions came in on top of it.
    bool in_tick = false;
    unsigned nested = 0;
    uint64_t at_tick[kCounters] = {};
    uint64_t marks = 0;
    FILE* out = nullptr;
    siwx_cost::AddressClasses classes;
    bool profile = false;
    // Keyed by address and length: a block translated again (after a
    // flush of the code cache) counts on in the same entry. Elements of an
    // unordered_map keep their address, which translated code adds to.
    std::unordered_map<uint64_t, Block> blocks;
    siwx_cost::CallStacks calls;
    std::map<Chain, Counted> reps;
    // The entry the last REP iteration counted in, while no CALL or RET
    // came since (elements of a std::map keep their address).
    Counted* rep_entry = nullptr;
    uint64_t rep_insn = 0;
    uint64_t rep_generation = ~uint64_t(0);
};

State* g;

bool IsKernel(uint64_t vaddr) { return vaddr >> 63; }

uint64_t NowNs() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return uint64_t(ts.tv_sec) * 1000000000u + ts.tv_nsec;
}

void OnMark(unsigned int /*vcpu*/, void* userdata) {
    const auto id = static_cast<unsigned>(reinterpret_cast<uintptr_t>(userdata));
    std::fprintf(g->out, "mark %u %" PRIu64 " %" PRIu64, id, ++g->marks, NowNs());
    for (int c = 0; c < kCounters; ++c)
        std::fprintf(g->out, " %s=%" PRIu64, kCounterNames[c], g->counts[c]);
    std::fputc('\n', g->out);
    if (g->profile) {
        for (auto& [key, b] : g->blocks) {
            if (b.execs == b.dumped) continue;
            std::fprintf(g->out, "tb %" PRIx64 " %u %" PRIu64 "\n", b.vaddr, b.insns,
                         b.execs - b.dumped);
            b.dumped = b.execs;
        }
        for (auto& [chain, c] : g->reps) {
            if (c.n == c.dumped) continue;
            std::fprintf(g->out, "rep %" PRIx64 " ", chain[0]);
            for (size_t i = 1; i < chain.size() && chain[i]; ++i)
                std::fprintf(g->out, "%s%" PRIx64, i > 1 ? "," : "", chain[i]);
            std::fprintf(g->out, " %" PRIu64 "\n", c.n - c.dumped);
            c.dumped = c.n;
        }
    }
    std::fflush(g->out);
}

// The timer interrupt came in: what runs until its IRETQ is the tick's.
// (Counters are added at the start of a block: the entry block's own
// count is in already, under kTick.)
void OnTickEntry(unsigned int /*vcpu*/, void* /*userdata*/) {
    if (g->in_tick) {
        ++g->nested;
        return;
    }
    g->in_tick = true;
    g->nested = 0;
    std::copy(g->counts, g->counts + kCounters, g->at_tick);
}

// Another interrupt or exception: its IRETQ is not the timer's.
void OnIrqEntry(unsigned int /*vcpu*/, void* /*userdata*/) {
    if (g->in_tick) ++g->nested;
}

// An IRETQ: if it ends the tick's window, what was counted elsewhere
// meanwhile moves to the tick.
void OnIret(unsigned int /*vcpu*/, void* /*userdata*/) {
    if (!g->in_tick) return;
    if (g->nested > 0) {
        --g->nested;
        return;
    }
    g->in_tick = false;
    for (Counter c : {kPath, kIdle, kUser}) {
        const uint64_t d = g->counts[c] - g->at_tick[c];
        g->counts[c] -= d;
        g->counts[kTick] += d;
    }
    for (Counter c : {kRepKernel, kRepUser}) g->counts[c] = g->at_tick[c];
}

void OnCall(unsigned int /*vcpu*/, qemu_plugin_meminfo_t info, uint64_t slot, void* ret) {
    if (qemu_plugin_mem_is_store(info)) g->calls.Call(slot, reinterpret_cast<uintptr_t>(ret));
}

void OnRet(unsigned int /*vcpu*/, qemu_plugin_meminfo_t /*info*/, uint64_t slot, void*) {
    g->calls.Ret(slot);
}

// One iteration of the kernel REP instruction at @insn (QEMU 7.2 runs
// each as an execution of its own).
void OnRepIteration(unsigned int /*vcpu*/, void* insn) {
    const auto at = reinterpret_cast<uintptr_t>(insn);
    if (!g->rep_entry || g->rep_insn != at || g->rep_generation != g->calls.generation()) {
        Chain chain{};
        chain[0] = at;
        g->calls.Chain(chain.data() + 1, kChainDepth);
        g->rep_entry = &g->reps[chain];
        g->rep_insn = at;
        g->rep_generation = g->calls.generation();
    }
    ++g->rep_entry->n;
}

// With profile=on: the calls open, for the kernel REP iterations' callers.
void TrackCalls(qemu_plugin_insn* insn, const uint8_t* bytes, size_t size) {
    const uint64_t at = qemu_plugin_insn_vaddr(insn);
    if (siwx_cost::IsCall(bytes, size))
        qemu_plugin_register_vcpu_mem_cb(insn, OnCall, QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_W,
                                         reinterpret_cast<void*>(uintptr_t(at + size)));
    else if (siwx_cost::IsRet(bytes, size))
        qemu_plugin_register_vcpu_mem_cb(insn, OnRet, QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_R,
                                         nullptr);
}

Counter CounterOf(uint64_t vaddr) {
    if (!IsKernel(vaddr)) return kUser;
    switch (g->classes.Of(vaddr)) {
        case AddressClass::kTick:
        case AddressClass::kTickEntry:
            return kTick;
        case AddressClass::kIdle:
            return kIdle;
        default:
            return kPath;
    }
}

void OnTranslate(qemu_plugin_id_t /*id*/, qemu_plugin_tb* tb) {
    const uint64_t vaddr = qemu_plugin_tb_vaddr(tb);
    const size_t n = qemu_plugin_tb_n_insns(tb);
    qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
                                             &g->counts[CounterOf(vaddr)], n);
    if (g->profile) {
        // A block holds at most 512 instructions (TCG's limit).
        Block& b = g->blocks.try_emplace(vaddr << 10 | (n & 0x3ff), Block{vaddr, uint32_t(n)})
                       .first->second;
        qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &b.execs, 1);
    }
    switch (IsKernel(vaddr) ? g->classes.EntryAt(vaddr) : AddressClass::kPath) {
        case AddressClass::kTickEntry:
            qemu_plugin_register_vcpu_tb_exec_cb(tb, OnTickEntry, QEMU_PLUGIN_CB_NO_REGS, nullptr);
            break;
        case AddressClass::kIrqEntry:
            qemu_plugin_register_vcpu_tb_exec_cb(tb, OnIrqEntry, QEMU_PLUGIN_CB_NO_REGS, nullptr);
            break;
        default:
            break;
    }
    uint64_t* rep = &g->counts[IsKernel(vaddr) ? kRepKernel : kRepUser];
    for (size_t i = 0; i < n; ++i) {
        qemu_plugin_insn* insn = qemu_plugin_tb_get_insn(tb, i);
        const auto* bytes = static_cast<const uint8_t*>(qemu_plugin_insn_data(insn));
        const size_t size = qemu_plugin_insn_size(insn);
        if (g->profile && IsKernel(vaddr)) TrackCalls(insn, bytes, size);
        if (IsKernel(vaddr) && siwx_cost::IsIret(bytes, size)) {
            qemu_plugin_register_vcpu_insn_exec_cb(insn, OnIret, QEMU_PLUGIN_CB_NO_REGS, nullptr);
        } else if (siwx_cost::IsRepString(bytes, size)) {
            qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64, rep, 1);
            if (g->profile && IsKernel(vaddr))
                qemu_plugin_register_vcpu_insn_exec_cb(
                    insn, OnRepIteration, QEMU_PLUGIN_CB_NO_REGS,
                    reinterpret_cast<void*>(uintptr_t(qemu_plugin_insn_vaddr(insn))));
        } else if (auto mark = siwx_cost::DecodeMark(bytes, size)) {
            qemu_plugin_register_vcpu_insn_exec_cb(insn, OnMark, QEMU_PLUGIN_CB_NO_REGS,
                                                   reinterpret_cast<void*>(uintptr_t(*mark)));
        }
    }
}

void OnExit(qemu_plugin_id_t /*id*/, void* /*userdata*/) {
    if (g->out) {
        std::fprintf(g->out, "exit %" PRIu64 " marks\n", g->marks);
        std::fclose(g->out);
        g->out = nullptr;
    }
}

// QEMU shows what a plugin logs only with -d plugin: a refusal goes to
// standard error too, where the harness' log keeps it.
int Refuse(const std::string& why) {
    const std::string line = "siwx cost plugin: " + why + "\n";
    qemu_plugin_outs(line.c_str());
    std::fputs(line.c_str(), stderr);
    return -1;
}

}  // namespace

int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t* info, int argc, char** argv) {
    if (info->version.cur != kQemuPluginApiVersion)
        return Refuse("this QEMU's TCG plugin API is version " + std::to_string(info->version.cur) +
                      "; the plugin is written for version 1 (QEMU 7.2, Debian 12's "
                      "qemu-system-x86): run cost steps with that QEMU");
    if (std::strcmp(info->target_name, "x86_64") != 0 || !info->system_emulation)
        return Refuse(std::string("counts x86_64 system emulation only, not ") + info->target_name);
    if (info->system.smp_vcpus != 1)
        return Refuse(
            "needs a guest of one vCPU (-smp 1): API 1's inline counters are "
            "not atomic");
    g = new State;
    std::string out, classes;
    for (int i = 0; i < argc; ++i) {
        std::string arg = argv[i];
        const auto eq = arg.find('=');
        const std::string key = arg.substr(0, eq),
                          val = eq == std::string::npos ? "" : arg.substr(eq + 1);
        if (key == "out") {
            out = val;
        } else if (key == "classes") {
            classes = val;
        } else if (key == "profile") {
            g->profile = val == "on" || val == "true";
        } else {
            return Refuse("unknown argument '" + arg + "' (out=FILE, classes=FILE, profile=on)");
        }
    }
    if (out.empty()) return Refuse("out=FILE is required");
    if (!classes.empty()) {
        std::ifstream in(classes);
        std::string error;
        if (!in) return Refuse("cannot read " + classes);
        if (!g->classes.Load(in, &error)) return Refuse(classes + ": " + error);
    }
    g->out = std::fopen(out.c_str(), "w");
    if (!g->out) return Refuse("cannot write " + out + ": " + std::strerror(errno));
    std::fprintf(g->out, "siwx-cost 1 classes=%zu profile=%d\n", g->classes.size(), g->profile);
    std::fflush(g->out);
    qemu_plugin_register_vcpu_tb_trans_cb(id, OnTranslate);
    qemu_plugin_register_atexit_cb(id, OnExit, nullptr);
    return 0;
}
