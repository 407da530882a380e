//go:build amd64 && !purego

#include "textflag.h"

// CLASSIFY replaces the bytes of X with their classes in the nibble table
// LO/HI (nibbles): LO[x&15] & HI[x>>4]. Y6 holds 0x0f in every byte; T is
// scratch.
#define CLASSIFY(X, T, LO, HI) \
	VPSRLW $4, X, T; \
	VPAND Y6, X, X; \
	VPAND Y6, T, T; \
	VPSHUFB X, LO, X; \
	VPSHUFB T, HI, T; \
	VPAND T, X, X

// func anchorMasks(b []byte, t *nibbleTable, out *[maskBlocks]blockMask) (n, scanned int)
//
// A 64-byte block is classified by t.cur, 32 bytes at a time: without an
// anchor it costs one VPTEST. A block with one, neither the first nor the
// last of b, is classified again by its bytes' neighbours (t.prev over the
// bytes one before, t.next over those one after) when t.filter is set; a
// block still holding an anchor gets its 64-bit mask stored with its
// offset.
TEXT ·anchorMasks(SB), NOSPLIT, $0-56
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), R12
	MOVQ t+24(FP), DX
	MOVQ out+32(FP), DI
	MOVQ R12, CX
	ANDQ $-64, CX               // bytes in whole blocks
	XORQ BX, BX                 // offset of the current block
	XORQ R10, R10               // masks stored
	TESTQ CX, CX
	JZ   done
	MOVQ 192(DX), R13           // t.filter
	MOVQ $0x0f0f0f0f0f0f0f0f, AX
	VMOVQ AX, X6
	VPBROADCASTQ X6, Y6         // nibble mask
	VPXOR Y7, Y7, Y7            // zero
	VMOVDQU 0(DX), Y4           // cur
	VMOVDQU 32(DX), Y5
	VMOVDQU 64(DX), Y8          // prev
	VMOVDQU 96(DX), Y9
	VMOVDQU 128(DX), Y10        // next
	VMOVDQU 160(DX), Y11

loop:
	VMOVDQU 0(SI)(BX*1), Y0
	VMOVDQU 32(SI)(BX*1), Y1
	CLASSIFY(Y0, Y2, Y4, Y5)
	CLASSIFY(Y1, Y3, Y4, Y5)
	VPOR Y0, Y1, Y2
	VPTEST Y2, Y2
	JNZ  found

next:
	ADDQ $64, BX
	CMPQ BX, CX
	JB   loop
	VZEROUPPER

done:
	MOVQ R10, n+40(FP)
	MOVQ BX, scanned+48(FP)
	RET

found:
	TESTQ R13, R13
	JZ   keep
	TESTQ BX, BX
	JZ   keep                   // b[-1] is not ours to read
	LEAQ 65(BX), AX
	CMPQ AX, R12
	JA   keep                   // nor is b[len(b)]
	VMOVDQU -1(SI)(BX*1), Y12
	CLASSIFY(Y12, Y13, Y8, Y9)
	VPAND Y12, Y0, Y0
	VMOVDQU 31(SI)(BX*1), Y12
	CLASSIFY(Y12, Y13, Y8, Y9)
	VPAND Y12, Y1, Y1
	VMOVDQU 1(SI)(BX*1), Y12
	CLASSIFY(Y12, Y13, Y10, Y11)
	VPAND Y12, Y0, Y0
	VMOVDQU 33(SI)(BX*1), Y12
	CLASSIFY(Y12, Y13, Y10, Y11)
	VPAND Y12, Y1, Y1
	VPOR Y0, Y1, Y2
	VPTEST Y2, Y2
	JZ   next

keep:
	VPCMPEQB Y7, Y0, Y0         // 0xff where not an anchor
	VPCMPEQB Y7, Y1, Y1
	VPMOVMSKB Y0, R8
	VPMOVMSKB Y1, R9
	SHLQ $32, R9
	ORQ  R9, R8
	NOTQ R8
	MOVQ BX, 0(DI)
	MOVQ R8, 8(DI)
	ADDQ $16, DI
	INCQ R10
	CMPQ R10, $64               // maskBlocks
	JB   next
	ADDQ $64, BX
	VZEROUPPER
	JMP  done
