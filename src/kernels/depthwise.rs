//! The depthwise convolution's vec4 form (`shaders/depthwise4.wgsl`, channel multiplier 1, channels
//! in fours) written out for one window: how many adjacent pixels a thread computes, and the reads
//! of one filter row as straight-line code — each input column the pixels share read once.

/// Pixels per thread, tried largest first: more pixels share more of a filter row's input columns
/// and each filter tap, at the cost of accumulators and of pixels computed past a row's end.
const PIXELS: [usize; 3] = [16, 8, 4];

/// At most this many vec4 values live in a filter row's body: the input columns it reads plus
/// the pixels' accumulators (on CPU adapters). 16 pixels of a 3×3 stride-1 window (18 columns + 16)
/// fit; 16 of a stride-2 window (33 + 16) lost the device on SwiftShader — its GPU process died on
/// that kernel in the `convnet-frames` example — so such a window takes 8; 4 pixels of a 1×29
/// window (32 + 4) lost it too, so such a window runs the looping kernel (`Form::pick`).
const MAX_LIVE: usize = 34;

/// One specialisation of `depthwise4.wgsl`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Form {
    /// Output pixels per thread.
    pub pixels: usize,
    /// Filter width, horizontal stride and dilation.
    fw: usize,
    sw: usize,
    dw: usize,
}

impl Form {
    /// The form for an output row of `ow` pixels and a window `fw` wide with horizontal stride `sw`
    /// and dilation `dw`: on a CPU adapter (`cpu`), the most pixels per thread (16, 8 or 4) not
    /// above `ow` (so a short row computes few pixels past its end) whose filter row keeps at most
    /// [`MAX_LIVE`] values live, and none when even 4 pixels would keep more (a wide window: the
    /// caller runs the looping `depthwise.wgsl`; on SwiftShader a 1×29 window's 32 columns + 4 lost
    /// the device, a 1×27 window's 30 + 4 ran); on a GPU 4, as before this form was written out (a
    /// GPU's caches make a repeated read cheap, and four times fewer threads would leave more of it
    /// idle; not measured on one).
    pub(super) fn pick(ow: usize, fw: usize, sw: usize, dw: usize, cpu: bool) -> Option<Form> {
        let form = |pixels| Form { pixels, fw, sw, dw };
        if !cpu {
            return Some(form(4));
        }
        let fits = |f: &Form| f.columns().len() + f.pixels <= MAX_LIVE;
        if !fits(&form(4)) {
            return None;
        }
        let most = PIXELS
            .iter()
            .map(|&p| form(p))
            .find(|f| f.pixels <= ow && fits(f));
        Some(most.unwrap_or(form(4)))
    }

    /// The input columns one filter row reads, relative to the first pixel's first: every
    /// `k · stride + fx · dilation`, once each, in order.
    fn columns(&self) -> Vec<usize> {
        let mut c: Vec<usize> = (0..self.pixels)
            .flat_map(|k| (0..self.fw).map(move |fx| k * self.sw + fx * self.dw))
            .collect();
        c.sort_unstable();
        c.dedup();
        c
    }

    /// Its part of the pipeline key.
    pub(super) fn key(&self) -> String {
        format!("p{}w{}s{}d{}", self.pixels, self.fw, self.sw, self.dw)
    }

    /// `depthwise4.wgsl` with its body written out.
    pub(super) fn source(&self, template: &str) -> String {
        let p = self.pixels;
        let accumulators: String = (0..p)
            .map(|k| format!("    var a{k} = vec4<f32>(0.0);\n"))
            .collect();
        let mut row: String = self
            .columns()
            .iter()
            .map(|o| format!("        let t{o} = tap(row, base + {o}, W, C4, c4);\n"))
            .collect();
        for fx in 0..self.fw {
            row += &format!("        let f{fx} = w[frow + {fx}u * C4];\n");
            for k in 0..p {
                let o = k * self.sw + fx * self.dw;
                row += &format!("        a{k} = a{k} + t{o} * f{fx};\n");
            }
        }
        // the pixels' quads are the same channels: an epilogue's per-channel leaves read once
        let stores: String = (0..p)
            .map(|k| match k {
                0 => "    let c = channels(i);\n    store4c(i, a0, c);\n".to_string(),
                _ => format!("    if (ox + {k}u < OW) {{\n        store4c(i + {k}u * C, a{k}, c);\n    }}\n"),
            })
            .collect();
        format!("const PIXELS: u32 = {p}u;\n")
            + &template
                .replace("//{{ACCUMULATORS}}\n", &accumulators)
                .replace("//{{ROW}}\n", &row)
                .replace("//{{STORES}}\n", &stores)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_read_each_column_once() {
        // 3×3 stride 1 on a 112-pixel row: 16 pixels, 18 columns (not 48 reads)
        let f = Form::pick(112, 3, 1, 1, true).unwrap();
        assert_eq!(f.pixels, 16);
        assert_eq!(f.columns(), (0..18).collect::<Vec<_>>());
        // stride 2: 16 pixels would need 33 columns; 8 need 17
        let s2 = Form::pick(56, 3, 2, 1, true).unwrap();
        assert_eq!((s2.pixels, s2.columns().len()), (8, 17));
        // a 7-pixel row: 4 per thread; a 9-pixel row: 8
        assert_eq!(Form::pick(7, 3, 1, 1, true).unwrap().pixels, 4);
        assert_eq!(Form::pick(9, 3, 1, 1, true).unwrap().pixels, 8);
        // dilation 4 with stride 1: the columns interleave, 4 pixels × 3 taps = 12 distinct
        let d = Form {
            pixels: 4,
            fw: 3,
            sw: 1,
            dw: 4,
        };
        assert_eq!(d.columns(), vec![0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
        // wide windows: 8 pixels would keep 56 + 8 and 44 + 8 values live
        assert_eq!(Form::pick(112, 7, 11, 1, true).unwrap().pixels, 4);
        assert_eq!(Form::pick(112, 7, 3, 5, true).unwrap().pixels, 4);
        // 5×5 stride 1: 16 pixels would keep 20 + 16; 8 keep 12 + 8
        assert_eq!(Form::pick(112, 5, 1, 1, true).unwrap().pixels, 8);
        // a GPU: 4 pixels a thread, each column still read once
        let g = Form::pick(112, 3, 1, 1, false).unwrap();
        assert_eq!((g.pixels, g.columns().len()), (4, 6));
        // a window whose 4 pixels keep more than MAX_LIVE values live (1×29: 32 columns + 4; 9
        // taps 11 apart: 36 + 4) has no written-out form on a CPU adapter; 1×27 (30 + 4) has
        assert_eq!(Form::pick(60, 29, 1, 1, true), None);
        assert_eq!(Form::pick(60, 9, 11, 1, true), None);
        assert_eq!(Form::pick(60, 27, 1, 1, true).map(|f| f.pixels), Some(4));
        assert_eq!(Form::pick(60, 29, 1, 1, false).map(|f| f.pixels), Some(4));
    }
}
