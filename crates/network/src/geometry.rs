//! Layer geometry: what a conv or fc layer looks like to the mapper.
//!
//! A fully connected layer is described as a 1x1 convolution on a 1x1 input, so that one
//! code path (im2col, mapping, counting) serves both kinds.

use serde::{Deserialize, Serialize};

/// The two layer kinds that are mapped on crossbars.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LayerKind {
    Conv,
    Fc,
}

impl LayerKind {
    pub fn as_str(self) -> &'static str {
        match self {
            LayerKind::Conv => "conv",
            LayerKind::Fc => "fc",
        }
    }
}

/// Geometry of a (possibly grouped) 2-D convolution; fc layers use kernel 1x1 on a 1x1 input.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ConvGeometry {
    pub in_channels: usize,
    pub out_channels: usize,
    /// [R, S]: kernel height and width.
    pub kernel: [usize; 2],
    pub stride: [usize; 2],
    pub padding: [usize; 2],
    pub dilation: [usize; 2],
    pub groups: usize,
    /// [H, W] of one input channel.
    pub input_hw: [usize; 2],
}

impl ConvGeometry {
    /// A fully connected layer `in_features -> out_features`.
    pub fn fc(in_features: usize, out_features: usize) -> Self {
        ConvGeometry {
            in_channels: in_features,
            out_channels: out_features,
            kernel: [1, 1],
            stride: [1, 1],
            padding: [0, 0],
            dilation: [1, 1],
            groups: 1,
            input_hw: [1, 1],
        }
    }

    /// A fully connected layer applied to each of `tokens` vectors of a sample (a
    /// transformer's projections over a sequence, `[T, in] x [in, out]`): a 1x1 conv over
    /// an input of `in_features` channels and `tokens` x 1 positions, so that each token is
    /// one input vector, as each output position of a conv is. `tokens` = 1 is [`Self::fc`].
    pub fn fc_tokens(in_features: usize, out_features: usize, tokens: usize) -> Self {
        ConvGeometry {
            input_hw: [tokens, 1],
            ..Self::fc(in_features, out_features)
        }
    }

    /// A square conv with equal stride/padding in both dimensions and no dilation.
    pub fn conv(
        in_channels: usize,
        out_channels: usize,
        kernel: usize,
        stride: usize,
        padding: usize,
        groups: usize,
        input_hw: [usize; 2],
    ) -> Self {
        ConvGeometry {
            in_channels,
            out_channels,
            kernel: [kernel, kernel],
            stride: [stride, stride],
            padding: [padding, padding],
            dilation: [1, 1],
            groups,
            input_hw,
        }
    }

    /// Checks the geometry is realisable; the message names the offending field.
    pub fn validate(&self) -> Result<(), String> {
        let pos = [
            ("in_channels", self.in_channels),
            ("out_channels", self.out_channels),
            ("kernel", self.kernel[0].min(self.kernel[1])),
            ("stride", self.stride[0].min(self.stride[1])),
            ("dilation", self.dilation[0].min(self.dilation[1])),
            ("groups", self.groups),
            ("input_shape", self.input_hw[0].min(self.input_hw[1])),
        ];
        for (field, v) in pos {
            if v == 0 {
                return Err(format!("{field}: must be positive"));
            }
        }
        if !self.in_channels.is_multiple_of(self.groups) {
            return Err(format!(
                "groups: {} does not divide in_channels {}",
                self.groups, self.in_channels
            ));
        }
        if !self.out_channels.is_multiple_of(self.groups) {
            return Err(format!(
                "groups: {} does not divide out_channels {}",
                self.groups, self.out_channels
            ));
        }
        for d in 0..2 {
            let span = self.dilation[d] * (self.kernel[d] - 1) + 1;
            if self.input_hw[d] + 2 * self.padding[d] < span {
                return Err(format!(
                    "kernel: dilated kernel {} exceeds padded input {}",
                    span,
                    self.input_hw[d] + 2 * self.padding[d]
                ));
            }
        }
        Ok(())
    }

    /// [Ho, Wo] per docs/model.md §9.
    pub fn output_hw(&self) -> [usize; 2] {
        let mut o = [0; 2];
        for (d, od) in o.iter_mut().enumerate() {
            let span = self.dilation[d] * (self.kernel[d] - 1) + 1;
            *od = (self.input_hw[d] + 2 * self.padding[d] - span) / self.stride[d] + 1;
        }
        o
    }

    /// Rows of one group's matrix: K = (Cin/G) * R * S.
    pub fn k_rows(&self) -> usize {
        self.in_channels / self.groups * self.kernel[0] * self.kernel[1]
    }

    /// Logical columns of one group's matrix: Cout/G.
    pub fn cols_per_group(&self) -> usize {
        self.out_channels / self.groups
    }

    /// Input vectors per sample: one per output position.
    pub fn vectors_per_sample(&self) -> usize {
        let [ho, wo] = self.output_hw();
        ho * wo
    }

    /// Elements of one sample's input tensor (all channels, unpadded).
    pub fn input_elements(&self) -> usize {
        self.in_channels * self.input_hw[0] * self.input_hw[1]
    }

    /// Elements of one sample's output tensor.
    pub fn output_elements(&self) -> usize {
        self.out_channels * self.vectors_per_sample()
    }

    /// Elements of the weight tensor [Cout, Cin/G, R, S].
    pub fn weight_elements(&self) -> usize {
        self.out_channels * self.k_rows()
    }

    /// Multiply-accumulates per sample (for reports).
    pub fn macs_per_sample(&self) -> usize {
        self.weight_elements() * self.vectors_per_sample()
    }
}

/// A named layer: kind and geometry, without data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LayerSpec {
    pub name: String,
    pub kind: LayerKind,
    pub geom: ConvGeometry,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_size_follows_section_9() {
        // H=7, pad 1, R=3, dil 2, stride 2: (7 + 2 - 2*2 - 1)/2 + 1 = 3
        let g = ConvGeometry {
            in_channels: 4,
            out_channels: 8,
            kernel: [3, 3],
            stride: [2, 2],
            padding: [1, 1],
            dilation: [2, 2],
            groups: 2,
            input_hw: [7, 7],
        };
        assert_eq!(g.output_hw(), [3, 3]);
        assert_eq!(g.k_rows(), 2 * 9);
        assert_eq!(g.cols_per_group(), 4);
        assert!(g.validate().is_ok());
    }

    #[test]
    fn validate_rejects_bad_groups_and_zero_sizes() {
        let mut g = ConvGeometry::conv(6, 4, 3, 1, 1, 4, [5, 5]);
        assert!(g.validate().unwrap_err().starts_with("groups"));
        g.groups = 2;
        assert!(g.validate().is_ok());
        g.stride = [0, 1];
        assert!(g.validate().unwrap_err().starts_with("stride"));
    }
}
