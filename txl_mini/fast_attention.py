"""The fused attention: the readable attention's function in fewer kernels.

`ModelConfig.fast_attn` (the default) makes every block use `FastAttention` instead of
`MultiHeadAttention`; that choice is made in one place, `Block.__init__`. The parameters
and state_dict names are those of the readable path, so a checkpoint loads into either,
and tests/test_fast.py proves the two equal (forward, memory and gradients, float32 and
float64).

One attention, two callers. `forward` is `attend(queries(h), *kv([mem; h]), r, mask)`;
the key/value cache (kv_cache.py) calls the same `kv` on the L new positions only,
concatenates them to the keys and values it kept, and calls the same `attend`. A
readable-path model has the same parameters, so the cache calls these functions on its
attention too (`FastAttention.kv(attn, x)`).

One layout, head-first: queries (H, B, L, D), keys and values (H, B, K, D), also in the
cache. Why: term (b) + (d) is then ONE matmul per head over all B * L queries against
that head's position keys (K, H, D), with no copy of the position keys per stream; the
softmax kernels take (H, B) as their batch dimensions as they would take (B, H); and
the cache grows and trims along the key axis K, dim 2, in every layer.

Shapes: B batch, L queries, M memory, K = M + L keys, H heads, D head dim, C d_model.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from .attention import MultiHeadAttention


def padded(n: int) -> int:
    """n rounded up to a multiple of 16: the row length of (b) + (d)'s product. Rows of
    3,929 floats (K = 3,928) made that bmm about 1.7x slower than rows of 3,936 on a
    CPU (measured); the extra columns meet only masked entries, like rel_shift's pad."""
    return -(-n // 16) * 16


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
        K = mem.shape[1] + h.shape[1]
        k, values = self.kv(torch.cat([mem, h], dim=1))  # (H, B, K, D) each
        return self.attend(self.queries(h), k, values, self.rel_keys(R, K), mask)

    def kv(self, x):
        """Keys W_{k,E} x and values W_v x of states x (B, N, C): (H, B, N, D) each.

        One matmul with [W_ke; W_v]; the two results are views of its output.
        """
        B, N, _ = x.shape
        w_kv = torch.cat([self.W_ke.weight, self.W_v.weight])  # (2*H*D, C)
        kv = F.linear(x, w_kv).view(B, N, 2, self.n_head, self.d_head)
        kv = kv.permute(2, 3, 0, 1, 4)  # (2, H, B, N, D), a view
        return kv[0], kv[1]

    def rel_keys(self, R, K):
        """The position keys as `attend` takes them: (H, Kp, D), or None (absolute).

        `position_keys` (W_kr R or Shaw's rows, distances K-1 ... 0) head-first, like
        the keys, with zero rows in front: rel_shift's pad, moved before the product,
        and as many more as make Kp a multiple of 16 (`padded`).
        """
        r = self.position_keys(R, K)  # (K, H, D) or None
        if r is None:
            return None
        pad = padded(K + 1) - K
        return F.pad(r, (0, 0, 0, 0, pad, 0)).transpose(0, 1).contiguous()  # (H, Kp, D)

    def queries(self, h):
        """Queries W_q h of the segment h (B, L, C): (H, B, L, D), a view."""
        B, L, _ = h.shape
        return self.W_q(h).view(B, L, self.n_head, self.d_head).permute(2, 0, 1, 3)

    def attend(self, q, k, values, r, mask):
        """Attention of q (H, B, L, D) over k, values (H, B, K, D) -> (B, L, C).

        r (H, Kp, D), Kp > K: position keys for distances Kp-1, ..., 1, 0 (`rel_keys`),
        or None for absolute positions (they are inside q and k already). The rows of
        distances >= K are the pad: the shift puts them only on future keys, which the
        mask hides, so any finite rows will do. mask (L, K), True where a query may not
        look.
        """
        H, B, L, D = q.shape
        K = k.shape[2]
        p_drop = self.drop_att.p if self.training else 0.0
        # Absolute, no memory and no same_length window (the last query sees the first
        # key): the plain causal mask, which the kernels skip instead of computing all
        # L x L scores and masking half of them (the vanilla model of Table 9).
        causal = r is None and K == L and not bool(mask[-1, 0])
        # (L, K) True where a query may look; with r, the scores below replace it
        bias = None if causal or r is not None else ~mask
        if r is not None:
            # Shaw et al. have no u, v: the same products then give terms (a) and (b)
            qv = q
            if self.relative:  # u, v (H, D): per head, the same for every query
                q, qv = q + self.u[:, None, None], q + self.v[:, None, None]
            qv = (qv * self.scale).reshape(H, B * L, D)
            Kp = r.shape[1]
            bd = torch.bmm(qv, r.transpose(1, 2))  # (H, B*L, Kp): the pad columns first
            # rel_shift as a view: query i's score for key j, distance M + i - j, is in
            # column Kp-1 - (M+i-j) = (Kp-K-1) + L - i + j of its row; one query down,
            # one column left: rows of stride Kp - 1, starting Kp-K-1 + L in (no copy)
            bias = bd.as_strided((H, B, L, K), (B * L * Kp, L * Kp, Kp - 1, 1),
                                 bd.storage_offset() + Kp - K - 1 + L)
        if r is not None and self.training and q.device.type == "cpu":
            # by mode, not by numbers: the same either way
            logits = torch.baddbmm(
                bias.reshape(H * B, L, K),
                q.reshape(H * B, L, D),
                k.reshape(H * B, K, D).transpose(1, 2),
                alpha=self.scale,
            )  # (H*B, L, K): (a) + (c) + the shifted (b) + (d)
            logits = logits.masked_fill_(mask, float("-inf"))
            prob = self.drop_att(F.softmax(logits, dim=-1))
            out = torch.bmm(prob, values.reshape(H * B, K, D)).view(H, B, L, D)
        else:
            if r is not None:  # (b) + (d) and the mask as one additive bias
                # in place: bias is a view of bd, made above (no second H*B*L*K copy);
                # adding an (L, K) table of -inf / 0 is several times faster than a
                # masked_fill_ that broadcasts the bool mask over H * B (measured)
                bias = bias.add_(torch.where(mask, float("-inf"), 0.0))  # (H, B, L, K)
                if bias.is_cuda:  # torch 2.11's cuDNN kernel failed on this strided
                    bias = bias.contiguous()  # view (H200, d_head 8); cheap on a GPU
            out = F.scaled_dot_product_attention(
                q, k, values, attn_mask=bias, dropout_p=p_drop, is_causal=causal,
                scale=self.scale,
            )  # (H, B, L, D): (a) + (c) in the kernel
        out = out.permute(1, 2, 0, 3).reshape(B, L, H * D)  # (B, L, H*D)
        return self.drop(self.W_o(out))  # (B, L, C)
