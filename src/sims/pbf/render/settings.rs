//! What the user can change about the PBF picture: the view (`--view`, the View menu), the
//! depth filter and its options, the fluid's optics, the light passes, the sprites' shape.

/// What the renderer shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum View {
    /// The shaded fluid surface.
    Fluid,
    /// Particles as lit spheres coloured by speed.
    Particles,
    /// Particles as lit spheres coloured by density.
    Density,
    /// The `sphere_depth` buffer.
    Depth,
    /// The `smooth_depth` buffer.
    SmoothedDepth,
    /// The `thickness` buffer.
    Thickness,
    /// The `normals` buffer.
    Normals,
}

impl View {
    /// Every view, in menu order.
    pub const ALL: [View; 7] = [
        View::Fluid,
        View::Particles,
        View::Density,
        View::Depth,
        View::SmoothedDepth,
        View::Thickness,
        View::Normals,
    ];

    /// Label in the UI and the CLI (`--view`).
    pub const fn name(self) -> &'static str {
        match self {
            View::Fluid => "fluid",
            View::Particles => "particles",
            View::Density => "density",
            View::Depth => "depth",
            View::SmoothedDepth => "smoothed-depth",
            View::Thickness => "thickness",
            View::Normals => "normals",
        }
    }
}

/// The depth filter of the `smooth_depth` pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SmoothingFilter {
    /// Bilateral: spatial × range Gaussian.
    Bilateral,
    /// Narrow-range filter (Truong & Yuksel 2018).
    NarrowRange,
}

impl SmoothingFilter {
    /// Label in the UI.
    pub fn name(self) -> &'static str {
        match self {
            SmoothingFilter::Bilateral => "bilateral",
            SmoothingFilter::NarrowRange => "narrow-range",
        }
    }
}

/// Everything the user can change about the picture.
#[derive(Clone, Debug, PartialEq)]
pub struct RenderSettings {
    /// What to show.
    pub view: View,
    /// Iterations of the `smooth_depth` filter (0 = none).
    pub smoothing_iterations: u32,
    /// Which filter `smooth_depth` runs.
    pub smoothing_filter: SmoothingFilter,
    /// The narrow-range filter's last iteration runs in 2-D (`smooth_depth_2d`), as its
    /// authors do, instead of as separable halves.
    pub smooth_depth_2d: bool,
    /// The narrow-range filter's bias correction (its authors' `FIX_OTHER_WEIGHT`): a sample
    /// the filter drops (background or another layer) drops the one mirrored through the
    /// centre too, so the kernel stays symmetric and thin fluid and silhouettes stay near
    /// their splatted depth (docs/render-notes-filter.md).
    pub bias_correction: bool,
    /// The `smooth_thickness` pass blurs the thickness buffer (and the sun's) before
    /// absorption, refraction and the shadow use it; off shows each sprite's grain.
    pub smooth_thickness: bool,
    /// Colour the fluid takes where it is thick (linear RGB 0..1).
    pub fluid_color: [f32; 3],
    /// Beer–Lambert attenuation per RGB channel, 1/m.
    pub attenuation: [f32; 3],
    /// Refraction index n (water 1.33); sets Fresnel F0 and the refraction offset.
    pub refraction_index: f32,
    /// Point-sprite radius as a multiple of the particle radius (half the spacing).
    pub point_size: f32,
    /// The sunlight passes through the fluid: its shadow and caustics on the floor and the
    /// obstacles (the four light passes).
    pub fluid_light: bool,
    /// Exposure before tone mapping (1 = as shaded).
    pub exposure: f32,
    /// FXAA in the `post` pass.
    pub antialias: bool,
    /// `sphere_depth` and `thickness` (and the sun's view) draw each particle as its ellipsoid
    /// from the `anisotropy` stage (Yu & Turk 2013) instead of a sphere.
    pub anisotropy: bool,
}

impl Default for RenderSettings {
    fn default() -> Self {
        RenderSettings {
            view: View::Fluid,
            smoothing_iterations: 4,
            smoothing_filter: SmoothingFilter::NarrowRange,
            smooth_depth_2d: true,
            bias_correction: true,
            smooth_thickness: true,
            fluid_color: [0.01, 0.12, 0.32],
            attenuation: [5.0, 1.8, 0.8],
            refraction_index: 1.33,
            point_size: 1.3,
            fluid_light: true,
            exposure: 1.0,
            antialias: true,
            anisotropy: true,
        }
    }
}
