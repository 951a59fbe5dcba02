// The part of QEMU's TCG plugin API, version 1 (QEMU 7.2, Debian 12's
// qemu-system-x86), that siwx's cost plugin uses, declared here because no
// Debian package installs QEMU's own header. These declarations were
// checked against that header (qemu 1:7.2+dfsg, include/qemu/qemu-plugin.h;
// docs/performance.md, "The instruction counter"); another API version is
// refused at load (cost_plugin.cc), since its layout may differ.
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" {

using qemu_plugin_id_t = uint64_t;

// What QEMU tells the plugin at load.
struct qemu_info_t {
    const char* target_name;
    struct {
        int min;
        int cur;
    } version;
    bool system_emulation;
    union {
        struct {
            int smp_vcpus;
            int max_vcpus;
        } system;
    };
};

struct qemu_plugin_tb;
struct qemu_plugin_insn;

enum qemu_plugin_cb_flags {
    QEMU_PLUGIN_CB_NO_REGS,
    QEMU_PLUGIN_CB_R_REGS,
    QEMU_PLUGIN_CB_RW_REGS,
};

enum qemu_plugin_op {
    QEMU_PLUGIN_INLINE_ADD_U64,
};

using qemu_plugin_udata_cb_t = void (*)(qemu_plugin_id_t id, void* userdata);
using qemu_plugin_vcpu_udata_cb_t = void (*)(unsigned int vcpu_index, void* userdata);
using qemu_plugin_vcpu_tb_trans_cb_t = void (*)(qemu_plugin_id_t id, qemu_plugin_tb* tb);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_cb(qemu_plugin_tb* tb, qemu_plugin_vcpu_udata_cb_t cb,
                                          qemu_plugin_cb_flags flags, void* userdata);
void qemu_plugin_register_vcpu_tb_exec_inline(qemu_plugin_tb* tb, qemu_plugin_op op, void* ptr,
                                              uint64_t imm);
void qemu_plugin_register_vcpu_insn_exec_cb(qemu_plugin_insn* insn, qemu_plugin_vcpu_udata_cb_t cb,
                                            qemu_plugin_cb_flags flags, void* userdata);
void qemu_plugin_register_vcpu_insn_exec_inline(qemu_plugin_insn* insn, qemu_plugin_op op,
                                                void* ptr, uint64_t imm);
// Memory callbacks: the address an instruction reads or writes.
using qemu_plugin_meminfo_t = uint32_t;
enum qemu_plugin_mem_rw {
    QEMU_PLUGIN_MEM_R = 1,
    QEMU_PLUGIN_MEM_W,
    QEMU_PLUGIN_MEM_RW,
};
using qemu_plugin_vcpu_mem_cb_t = void (*)(unsigned int vcpu_index, qemu_plugin_meminfo_t info,
                                           uint64_t vaddr, void* userdata);
void qemu_plugin_register_vcpu_mem_cb(qemu_plugin_insn* insn, qemu_plugin_vcpu_mem_cb_t cb,
                                      qemu_plugin_cb_flags flags, qemu_plugin_mem_rw rw,
                                      void* userdata);
bool qemu_plugin_mem_is_store(qemu_plugin_meminfo_t info);
uint64_t qemu_plugin_insn_vaddr(const qemu_plugin_insn* insn);

void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void* userdata);

size_t qemu_plugin_tb_n_insns(const qemu_plugin_tb* tb);
uint64_t qemu_plugin_tb_vaddr(const qemu_plugin_tb* tb);
qemu_plugin_insn* qemu_plugin_tb_get_insn(const qemu_plugin_tb* tb, size_t idx);
const void* qemu_plugin_insn_data(const qemu_plugin_insn* insn);
size_t qemu_plugin_insn_size(const qemu_plugin_insn* insn);

void qemu_plugin_outs(const char* string);

}  // extern "C"

// The API version this file declares: a plugin exports it as
// qemu_plugin_version, and QEMU 7.2 reports it as qemu_info_t.version.cur.
constexpr int kQemuPluginApiVersion = 1;
