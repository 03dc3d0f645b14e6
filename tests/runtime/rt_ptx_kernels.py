"""Hand-written PTX kernels for the runtime tests and the launch benchmark (sm_90a).

PTX ISA 8.0 is the first with sm_90a; every ptxas and driver since CUDA 12.0 takes it.
"""

from __future__ import annotations

HEADER = ".version 8.0\n.target sm_90a\n.address_size 64\n"

# out[i] = x[i] + y[i] for i < n, one element per thread
VADD = HEADER + r"""
.visible .entry vadd(.param .u64 x, .param .u64 y, .param .u64 out, .param .u32 n)
{
    .reg .pred %p<2>;
    .reg .b32 %r<6>;
    .reg .f32 %f<4>;
    .reg .b64 %rd<10>;

    ld.param.u64 %rd1, [x];
    ld.param.u64 %rd2, [y];
    ld.param.u64 %rd3, [out];
    ld.param.u32 %r1, [n];
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, %tid.x;
    mad.lo.s32 %r5, %r2, %r3, %r4;
    setp.ge.u32 %p1, %r5, %r1;
    @%p1 bra DONE;
    cvta.to.global.u64 %rd4, %rd1;
    cvta.to.global.u64 %rd5, %rd2;
    cvta.to.global.u64 %rd6, %rd3;
    mul.wide.u32 %rd7, %r5, 4;
    add.s64 %rd8, %rd4, %rd7;
    ld.global.f32 %f1, [%rd8];
    add.s64 %rd9, %rd5, %rd7;
    ld.global.f32 %f2, [%rd9];
    add.f32 %f3, %f1, %f2;
    add.s64 %rd8, %rd6, %rd7;
    st.global.f32 [%rd8], %f3;
DONE:
    ret;
}
"""
VADD_SIG = ["*fp32:16", "*fp32:16", "*fp32:16", "i32"]

# Stores each scalar parameter, widened to 64 bits, into out[0..8]: checks the packing of
# every scalar width on the device.
SCALARS = HEADER + r"""
.visible .entry scalars(.param .u64 out, .param .u8 a_i1, .param .s8 a_i8, .param .u16 a_u16,
                        .param .u32 a_i32, .param .u64 a_i64, .param .u16 a_f16, .param .u16 a_bf16,
                        .param .u32 a_f32, .param .u64 a_f64)
{
    .reg .b16 %rs<6>;
    .reg .b32 %r<3>;
    .reg .b64 %rd<12>;

    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd1, %rd1;
    ld.param.u8 %rs1, [a_i1];
    cvt.u64.u16 %rd2, %rs1;
    st.global.u64 [%rd1], %rd2;
    ld.param.s8 %rs2, [a_i8];
    cvt.s64.s16 %rd3, %rs2;
    st.global.u64 [%rd1+8], %rd3;
    ld.param.u16 %rs3, [a_u16];
    cvt.u64.u16 %rd4, %rs3;
    st.global.u64 [%rd1+16], %rd4;
    ld.param.u32 %r1, [a_i32];
    cvt.s64.s32 %rd5, %r1;
    st.global.u64 [%rd1+24], %rd5;
    ld.param.u64 %rd6, [a_i64];
    st.global.u64 [%rd1+32], %rd6;
    ld.param.u16 %rs4, [a_f16];
    cvt.u64.u16 %rd7, %rs4;
    st.global.u64 [%rd1+40], %rd7;
    ld.param.u16 %rs5, [a_bf16];
    cvt.u64.u16 %rd8, %rs5;
    st.global.u64 [%rd1+48], %rd8;
    ld.param.u32 %r2, [a_f32];
    cvt.u64.u32 %rd9, %r2;
    st.global.u64 [%rd1+56], %rd9;
    ld.param.u64 %rd10, [a_f64];
    st.global.u64 [%rd1+64], %rd10;
    ret;
}
"""
SCALARS_SIG = ["*u64:16", "i1", "i8", "u16", "i32", "i64", "fp16", "bf16", "fp32", "fp64"]

# Writes 12345 at byte offset `off` of the dynamic shared memory, reads it back after a
# barrier and stores it + 1 to out[0]: only works when the block has > off bytes.
BIGSMEM = HEADER + r"""
.extern .shared .align 16 .b8 dsmem[];

.visible .entry bigsmem(.param .u64 out, .param .u32 off)
{
    .reg .b32 %r<5>;
    .reg .b64 %rd<3>;

    ld.param.u64 %rd1, [out];
    ld.param.u32 %r1, [off];
    mov.u32 %r2, dsmem;
    add.u32 %r2, %r2, %r1;
    mov.u32 %r3, 12345;
    st.shared.u32 [%r2], %r3;
    bar.sync 0;
    ld.shared.u32 %r4, [%r2];
    add.u32 %r4, %r4, 1;
    cvta.to.global.u64 %rd2, %rd1;
    st.global.u32 [%rd2], %r4;
    ret;
}
"""
BIGSMEM_SIG = ["*u32:16", "u32"]

# out[ctaid.x] = cluster_ctarank + 100 * cluster_nctarank
CLUSTER = HEADER + r"""
.visible .entry cluster_rank(.param .u64 out)
{
    .reg .b32 %r<5>;
    .reg .b64 %rd<4>;

    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd1, %rd1;
    mov.u32 %r1, %ctaid.x;
    mov.u32 %r2, %cluster_ctarank;
    mov.u32 %r3, %cluster_nctarank;
    mad.lo.u32 %r4, %r3, 100, %r2;
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r4;
    ret;
}
"""
CLUSTER_SIG = ["*u32:16"]

# Empty kernels for the launch-overhead benchmark.
EMPTY = HEADER + r"""
.visible .entry empty0()
{
    ret;
}

.visible .entry empty4(.param .u64 a, .param .u64 b, .param .u64 c, .param .u32 n)
{
    ret;
}
"""
EMPTY4_SIG = ["*fp32:16", "*fp32:16", "*fp32:16", "i32"]
