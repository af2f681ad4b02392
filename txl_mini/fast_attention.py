"""The fused attention path: the readable attention's function in fewer kernels (ch. 5).

`ModelConfig.fast_attn` (the default) makes every block use `FastAttention` instead of
`MultiHeadAttention`; that choice is made in one place, `Block.__init__`. The parameters
and state_dict names are those of the readable path, so a checkpoint loads into either,
and tests/test_fast.py proves the two equal (forward, memory and gradients, float32 and
float64). Chapter 5 shows this code beside `rel_shift` and times both.

Shapes: B batch, L queries, M memory, K = M + L keys, H heads, D head dim, C d_model.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from .attention import MultiHeadAttention


class FastAttention(MultiHeadAttention):
    """MultiHeadAttention with a fused forward; `project`, `scores`, `terms` inherited.

    - Keys and values come from ONE matmul with [W_ke; W_v] (concatenated here, so the
      parameters stay those of the readable path).
    - Head-first layouts (H, B, ...) make (b) + (d) ONE matmul per head over all B * L
      queries, against R's rows with a zero row in front: its output already holds
      rel_shift's pad column, so rel_shift's re-reading is a free view (no copy).
      pos_enc="shaw" runs the same code with Shaw's learned rows for W_kr R and no u, v.
    - (a) + (c), the mask, the softmax and the sum over values run in PyTorch's
      scaled_dot_product_attention, with the shifted (b) + (d) and the mask as an
      additive bias. Exception: training on a CPU, where that bias needs a gradient and
      PyTorch falls back to a generic kernel that checks for fully masked rows; there
      one baddbmm (bias + q k^T), an in-place mask and a softmax are faster (measured
      with `python -m txl_mini bench`).
    """

    def forward(self, h, mem, R, mask):
        """h (B, L, C), mem (B, M, C), R (K, C) or None, mask (L, K) -> (B, L, C)."""
        B, L, _ = h.shape
        H, D = self.n_head, self.d_head
        K = mem.shape[1] + L
        cat = torch.cat([mem, h], dim=1)  # (B, K, C)
        w_kv = torch.cat([self.W_ke.weight, self.W_v.weight])  # (2*H*D, C)
        kv = F.linear(cat, w_kv).view(B, K, 2, H, D).permute(2, 3, 0, 1, 4)
        k, values = kv[0], kv[1]  # (H, B, K, D) each, views
        q = self.W_q(h).view(B, L, H, D)
        p_drop = self.drop_att.p if self.training else 0.0
        if self.pos_enc == "absolute":
            # No memory and no same_length window (the last query sees the first key):
            # the plain causal mask, which the kernels skip instead of computing all
            # L x L scores and masking half of them (the vanilla model of Table 9).
            causal = K == L and not bool(mask[-1, 0])
            out = F.scaled_dot_product_attention(
                q.permute(2, 0, 1, 3), k, values, dropout_p=p_drop,
                attn_mask=None if causal else ~mask, is_causal=causal,
            )  # (H, B, L, D)
            return self._out(out)
        r = self.position_keys(R, K)  # (K, H, D): W_kr R, or Shaw's learned rows
        r_pad = F.pad(r, (0, 0, 0, 0, 1, 0)).permute(1, 2, 0)  # (H, D, K+1), row 0 zero
        # Shaw et al. have no u, v: the same products then give terms (a) and (b)
        qu, qv = (q + self.u, q + self.v) if self.relative else (q, q)
        qv = (qv * self.scale).permute(2, 0, 1, 3).reshape(H, B * L, D)
        bd = torch.bmm(qv, r_pad)  # (H, B*L, K+1): column 0 is rel_shift's pad
        bd = bd.view(H, B, K + 1, L)[:, :, 1:].view(H, B, L, K)  # rel_shift, a view
        qu = qu.permute(2, 0, 1, 3)  # (H, B, L, D): (a) + (c) in one product
        if self.training and h.device.type == "cpu":  # by mode: same numbers either way
            logits = torch.baddbmm(
                bd.reshape(H * B, L, K),
                qu.reshape(H * B, L, D),
                k.reshape(H * B, K, D).transpose(1, 2),
                alpha=self.scale,
            )  # (H*B, L, K)
            logits = logits.masked_fill_(mask, float("-inf"))
            prob = self.drop_att(F.softmax(logits, dim=-1))
            out = torch.bmm(prob, values.reshape(H * B, K, D)).view(H, B, L, D)
        else:
            bias = bd.masked_fill(mask, float("-inf"))  # (H, B, L, K)
            out = F.scaled_dot_product_attention(
                qu, k, values, attn_mask=bias, dropout_p=p_drop, scale=self.scale
            )  # (H, B, L, D)
        return self._out(out)

    def _out(self, out):
        """(H, B, L, D) attention output -> (B, L, C) through W_o."""
        H, B, L, D = out.shape
        out = out.permute(1, 2, 0, 3).reshape(B, L, H * D)  # (B, L, H*D)
        return self.drop(self.W_o(out))  # (B, L, C)
