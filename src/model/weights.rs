//! Weights: reading safetensors (single or sharded), handing them to the layers through a
//! checked `VarBuilder` backend, seeded random initialisation, and saving back under the same
//! names.

use super::error::{ModelError, Result};
use super::json_fields::read_json;
use candle_core::{DType, Device, Shape, Tensor, Var};
use candle_nn::var_builder::SimpleBackend;
use candle_nn::{Init, VarBuilder, VarMap};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Where parameter values come from.
enum Source {
    /// Tensors read from safetensors files, each with the file it came from.
    Files(HashMap<String, (Tensor, PathBuf)>),
    /// Seeded random values: normal with standard deviation `std` unless the layer asks for
    /// a constant (norm weights 1, biases 0).
    Random { seed: u64, std: f64 },
}

/// A `VarBuilder` backend that checks every tensor against the shape the layer asks for,
/// records the first problem as a `ModelError`, and (when trainable) registers each
/// parameter as a `Var` in a `VarMap` under its safetensors name.
pub struct ParameterStore {
    source: Source,
    trainable: bool,
    parameters: VarMap,
    first_error: Mutex<Option<ModelError>>,
}

impl ParameterStore {
    /// Parameters read from the safetensors files of a model folder.
    pub fn from_folder(dir: &Path, trainable: bool) -> Result<Self> {
        Ok(Self::new(
            Source::Files(read_folder_tensors(dir)?),
            trainable,
        ))
    }

    /// Parameters from tensors already in memory (named in errors as coming from `file`).
    pub fn from_tensors(tensors: HashMap<String, Tensor>, file: &Path, trainable: bool) -> Self {
        let tensors = tensors
            .into_iter()
            .map(|(name, tensor)| (name, (tensor, file.to_path_buf())))
            .collect();
        Self::new(Source::Files(tensors), trainable)
    }

    /// Seeded random parameters: the same seed gives the same values whatever the order in
    /// which layers ask for them.
    pub fn random(seed: u64, std: f64, trainable: bool) -> Self {
        Self::new(Source::Random { seed, std }, trainable)
    }

    fn new(source: Source, trainable: bool) -> Self {
        Self {
            source,
            trainable,
            parameters: VarMap::new(),
            first_error: Mutex::new(None),
        }
    }

    /// The trainable parameters created so far, by name.
    pub fn parameters(&self) -> VarMap {
        self.parameters.clone()
    }

    /// Builds with a `VarBuilder` over this store and turns a failure into the recorded
    /// `ModelError` (naming file and tensor) when there is one.
    pub fn build<T>(
        self,
        dtype: DType,
        device: &Device,
        construct: impl FnOnce(VarBuilder<'_>) -> candle_core::Result<T>,
    ) -> Result<(T, VarMap)> {
        let parameters = self.parameters.clone();
        let store = Arc::new(self);
        let backend: Box<dyn SimpleBackend> = Box::new(SharedStore(store.clone()));
        let builder = VarBuilder::from_backend(backend, dtype, device.clone());
        match construct(builder) {
            Ok(built) => Ok((built, parameters)),
            Err(error) => {
                let recorded = store
                    .first_error
                    .lock()
                    .ok()
                    .and_then(|mut slot| slot.take());
                Err(recorded.unwrap_or(ModelError::Candle(error)))
            }
        }
    }

    fn record(&self, error: ModelError) -> candle_core::Error {
        let message = error.to_string();
        if let Ok(mut slot) = self.first_error.lock()
            && slot.is_none()
        {
            *slot = Some(error);
        }
        candle_core::Error::Msg(message)
    }

    fn fetch(
        &self,
        shape: &Shape,
        name: &str,
        init: Init,
        dtype: DType,
        device: &Device,
    ) -> candle_core::Result<Tensor> {
        let tensor = match &self.source {
            Source::Files(tensors) => {
                let Some((tensor, file)) = tensors.get(name) else {
                    let file = tensors
                        .values()
                        .next()
                        .map(|(_, file)| file.clone())
                        .unwrap_or_default();
                    return Err(self.record(ModelError::MissingTensor {
                        file,
                        name: name.to_string(),
                    }));
                };
                if tensor.shape() != shape {
                    return Err(self.record(ModelError::TensorShape {
                        file: file.clone(),
                        name: name.to_string(),
                        found: tensor.dims().to_vec(),
                        expected: shape.dims().to_vec(),
                    }));
                }
                tensor.to_dtype(dtype)?.to_device(device)?
            }
            Source::Random { seed, std } => random_tensor(shape, name, init, *seed, *std)?
                .to_dtype(dtype)?
                .to_device(device)?,
        };
        if !self.trainable {
            return Ok(tensor);
        }
        let var = Var::from_tensor(&tensor)?;
        let shared = var.as_tensor().clone();
        let mut map = self
            .parameters
            .data()
            .lock()
            .map_err(|_| candle_core::Error::Msg("parameter map poisoned".into()))?;
        map.insert(name.to_string(), var);
        Ok(shared)
    }
}

/// The store behind an `Arc`, so the builder and the caller both reach it.
struct SharedStore(Arc<ParameterStore>);

impl SimpleBackend for SharedStore {
    fn get(
        &self,
        shape: Shape,
        name: &str,
        init: Init,
        dtype: DType,
        device: &Device,
    ) -> candle_core::Result<Tensor> {
        self.0.fetch(&shape, name, init, dtype, device)
    }

    fn get_unchecked(
        &self,
        name: &str,
        dtype: DType,
        device: &Device,
    ) -> candle_core::Result<Tensor> {
        match &self.0.source {
            Source::Files(tensors) => match tensors.get(name) {
                Some((tensor, _)) => tensor.to_dtype(dtype)?.to_device(device),
                None => Err(candle_core::Error::Msg(format!("no tensor `{name}`"))),
            },
            Source::Random { .. } => Err(candle_core::Error::Msg(format!(
                "no shape known for `{name}`"
            ))),
        }
    }

    fn contains_tensor(&self, name: &str) -> bool {
        match &self.0.source {
            Source::Files(tensors) => tensors.contains_key(name),
            Source::Random { .. } => true,
        }
    }
}

/// FNV-1a, to derive a per-tensor seed from its name.
fn name_hash(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn random_tensor(
    shape: &Shape,
    name: &str,
    init: Init,
    seed: u64,
    std: f64,
) -> candle_core::Result<Tensor> {
    let count = shape.elem_count();
    if let Init::Const(value) = init {
        return Tensor::full(value as f32, shape, &Device::Cpu);
    }
    let mut rng = StdRng::seed_from_u64(seed ^ name_hash(name));
    let values: Vec<f32> = (0..count)
        .map(|_| (standard_normal(&mut rng) * std) as f32)
        .collect();
    Tensor::from_vec(values, shape, &Device::Cpu)
}

/// One standard normal draw (Box–Muller).
pub fn standard_normal(rng: &mut StdRng) -> f64 {
    let u1: f64 = 1.0 - rng.random::<f64>();
    let u2: f64 = rng.random::<f64>();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// The safetensors files of a folder: those the shard index names, else `model.safetensors`,
/// else every `*.safetensors` file.
pub fn weight_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let index = dir.join("model.safetensors.index.json");
    if index.is_file() {
        let value = read_json(&index)?;
        let map = value
            .get("weight_map")
            .and_then(|map| map.as_object())
            .ok_or_else(|| ModelError::field(&index, "weight_map", "missing or not an object"))?;
        let mut files: Vec<PathBuf> = Vec::new();
        for (name, file) in map {
            let file = file.as_str().ok_or_else(|| {
                ModelError::field(&index, format!("weight_map.{name}"), "expected a file name")
            })?;
            let path = dir.join(file);
            if !files.contains(&path) {
                files.push(path);
            }
        }
        for path in &files {
            if !path.is_file() {
                return Err(ModelError::MissingFile {
                    dir: dir.to_path_buf(),
                    file: path
                        .file_name()
                        .map(|name| name.to_string_lossy().into_owned())
                        .unwrap_or_default(),
                    hint: "a shard named in model.safetensors.index.json".into(),
                });
            }
        }
        return Ok(files);
    }
    let single = dir.join("model.safetensors");
    if single.is_file() {
        return Ok(vec![single]);
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|source| ModelError::io(dir, source))?
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "safetensors"))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(ModelError::MissingFile {
            dir: dir.to_path_buf(),
            file: "model.safetensors".into(),
            hint: "the weights; sharded checkpoints need model.safetensors.index.json".into(),
        });
    }
    Ok(files)
}

fn read_folder_tensors(dir: &Path) -> Result<HashMap<String, (Tensor, PathBuf)>> {
    let mut tensors = HashMap::new();
    for path in weight_files(dir)? {
        let bytes = std::fs::read(&path).map_err(|source| ModelError::io(&path, source))?;
        let loaded =
            candle_core::safetensors::load_buffer(&bytes, &Device::Cpu).map_err(|error| {
                ModelError::field(
                    &path,
                    "(file)",
                    format!("not a readable safetensors file: {error}"),
                )
            })?;
        for (name, tensor) in loaded {
            tensors.insert(name, (tensor, path.clone()));
        }
    }
    Ok(tensors)
}

/// Saves tensors as one safetensors file with the `{"format": "pt"}` metadata transformers
/// expects, names sorted.
pub fn save_tensors(tensors: &BTreeMap<String, Tensor>, path: &Path) -> Result<()> {
    let contiguous: Vec<(String, Tensor)> = tensors
        .iter()
        .map(|(name, tensor)| Ok((name.clone(), tensor.contiguous()?.to_device(&Device::Cpu)?)))
        .collect::<candle_core::Result<_>>()?;
    let metadata = HashMap::from([("format".to_string(), "pt".to_string())]);
    safetensors::serialize_to_file(
        contiguous
            .iter()
            .map(|(name, tensor)| (name.as_str(), tensor)),
        Some(metadata),
        path,
    )
    .map_err(|error| {
        ModelError::field(path, "(file)", format!("cannot write safetensors: {error}"))
    })
}

/// The parameters of a `VarMap` by name, detached, in `dtype`.
pub fn parameter_tensors(parameters: &VarMap, dtype: DType) -> Result<BTreeMap<String, Tensor>> {
    let map = parameters
        .data()
        .lock()
        .map_err(|_| ModelError::Request("parameter map poisoned".into()))?;
    map.iter()
        .map(|(name, var)| Ok((name.clone(), var.as_tensor().detach().to_dtype(dtype)?)))
        .collect()
}
