//go:build amd64 && !purego

#include "textflag.h"

// func anchorMasks(b []byte, t *nibbleTable, out *[maskBlocks]blockMask) (n, scanned int)
//
// Per 32 bytes: split each byte into nibbles, look both up in t with
// VPSHUFB and AND the two class bytes: a byte is an anchor when the AND is
// not zero. A 64-byte block without one costs one VPTEST; a block with one
// gets its 64-bit mask stored with its offset.
TEXT ·anchorMasks(SB), NOSPLIT, $0-56
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), CX
	MOVQ t+24(FP), DX
	MOVQ out+32(FP), DI
	ANDQ $-64, CX               // bytes in whole blocks
	XORQ BX, BX                 // offset of the current block
	XORQ R10, R10               // masks stored
	TESTQ CX, CX
	JZ   done
	MOVQ $0x0f0f0f0f0f0f0f0f, AX
	VMOVQ AX, X6
	VPBROADCASTQ X6, Y6         // nibble mask
	VPXOR Y7, Y7, Y7            // zero
	VMOVDQU 0(DX), Y4           // lo table
	VMOVDQU 32(DX), Y5          // hi table

loop:
	VMOVDQU 0(SI)(BX*1), Y0
	VMOVDQU 32(SI)(BX*1), Y1
	VPSRLW $4, Y0, Y2
	VPSRLW $4, Y1, Y3
	VPAND Y6, Y0, Y0
	VPAND Y6, Y1, Y1
	VPAND Y6, Y2, Y2
	VPAND Y6, Y3, Y3
	VPSHUFB Y0, Y4, Y0
	VPSHUFB Y1, Y4, Y1
	VPSHUFB Y2, Y5, Y2
	VPSHUFB Y3, Y5, Y3
	VPAND Y2, Y0, Y0            // class bits: not zero at an anchor
	VPAND Y3, Y1, Y1
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
