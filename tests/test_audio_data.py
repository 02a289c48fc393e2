"""Audio data: the embedded generator and the loaders for real files, each
tested on small files written here in the real format."""

import numpy as np
import pytest
import soundfile as sf

from pytest_chaosmining.testbeds.audio.data import (
    CLASSES,
    AudioSpec,
    embedded_recordings,
    find_rainforest,
    find_speech_commands,
    generate,
    load_published,
    segments,
    speech_commands_files,
)


def spec(condition="RBFP", n=40, split="train", seed=0, **kw):
    return AudioSpec(
        condition, kw.pop("channels", 4), kw.pop("rate", 4000), kw.pop("duration", 0.5), n, split, seed, **kw
    )


@pytest.mark.parametrize("condition", ["RBFP", "RBRP", "SBFP", "SBRP"])
def test_generation_is_deterministic_and_shaped(condition):
    a, b = generate(spec(condition)), generate(spec(condition))
    assert a.waves.shape == (40, 4, 2000) and a.waves.dtype == np.int16
    np.testing.assert_array_equal(a.waves, b.waves)
    np.testing.assert_array_equal(a.labels, b.labels)
    assert not np.array_equal(a.waves, generate(spec(condition, seed=1)).waves)
    assert set(a.labels) <= set(range(len(CLASSES)))


def test_seed_zero_is_a_seed():
    assert not np.array_equal(generate(spec(seed=0)).waves, generate(spec(seed=1)).waves)


def test_fixed_position_is_channel_zero_and_random_position_spreads():
    assert (generate(spec("SBFP")).channels == 0).all()
    rp = generate(spec("RBRP", n=400)).channels
    assert set(rp) == {0, 1, 2, 3} and min(np.bincount(rp)) > 60


def test_speech_sits_in_its_channel_and_every_channel_spans_minus_one_to_one():
    data = generate(spec("RBRP", n=60))
    for wave, c in zip(data.waves, data.channels):
        assert np.abs(wave[c]).max() == 32767  # the speech channel is peak-normalised
        assert (wave[c] == 0).mean() < 0.5  # padded, but with a recording floor
    assert np.abs(data.waves).max() <= 32767


def test_random_background_is_clipped_gaussian():
    noise = generate(spec("RBFP", n=20)).waves[:, 1:].astype(float) / 32767
    assert abs(noise.std() - 0.25) < 0.01 and np.abs(noise).max() <= 1.0


def test_speech_is_not_given_away_by_its_magnitude():
    """|input| alone must not find the speech channel: its mean magnitude is below
    the noise channels' in both backgrounds."""
    for condition in ("RBFP", "SBFP"):
        mag = np.abs(generate(spec(condition, n=200)).waves.astype(float)).mean(axis=(0, 2))
        assert mag[0] < mag[1:].min(), (condition, mag)


def test_structural_segments_follow_the_papers_normalisation():
    rng = np.random.default_rng(0)
    recordings = [rng.normal(0, 3, 5000), rng.normal(0, 0.1, 1000)]
    segs = segments(recordings, 50, 2000, rng)
    assert segs.shape == (50, 2000) and np.abs(segs).max() <= 1.0
    p99 = np.percentile(np.abs(segs), 99, axis=1)
    assert np.allclose(p99, 1.0, atol=1e-3)


def test_train_and_validation_recordings_are_disjoint():
    train = embedded_recordings(spec("SBFP", split="train"))
    val = embedded_recordings(spec("SBFP", split="val"))
    assert len(train) == 8 and len(val) == 4
    assert not any(np.allclose(t[:1000], v[:1000]) for t in train for v in val)


def test_classes_are_distinguishable_templates():
    from pytest_chaosmining.testbeds.audio.data import synthesise_word

    rng = np.random.default_rng(0)
    lengths = {w: len(synthesise_word(w, rng, 8000, 0.5)) for w in CLASSES}
    assert len(CLASSES) == 10 and all(1000 < n < 6000 for n in lengths.values())


# -- real sources, written here in their real formats ------------------------------------
def _wav(path, seconds, rate=16000, freq=440.0, channels=1):
    t = np.arange(int(seconds * rate)) / rate
    data = np.stack([0.5 * np.sin(2 * np.pi * freq * (c + 1) * t) for c in range(channels)], axis=1)
    path.parent.mkdir(parents=True, exist_ok=True)
    sf.write(str(path), data if channels > 1 else data[:, 0], rate, subtype="PCM_16")


@pytest.fixture
def speech_commands_dir(tmp_path):
    """torchaudio's layout: SpeechCommands/speech_commands_v0.02/<word>/<speaker>_nohash_<i>.wav."""
    root = tmp_path / "data" / "SpeechCommands" / "speech_commands_v0.02"
    for word, freq in (("yes", 300.0), ("no", 600.0), ("up", 900.0)):
        for i in range(4):
            _wav(root / word / f"spk{i}_nohash_0.wav", 0.6 if i % 2 else 1.0, freq=freq)
    _wav(root / "_background_noise_" / "white_noise.wav", 2.0)
    (root / "validation_list.txt").write_text("yes/spk0_nohash_0.wav\nno/spk0_nohash_0.wav\nup/spk0_nohash_0.wav\n")
    (root / "testing_list.txt").write_text("yes/spk1_nohash_0.wav\nno/spk1_nohash_0.wav\nup/spk1_nohash_0.wav\n")
    return tmp_path / "data"


@pytest.fixture
def rainforest_dir(speech_commands_dir):
    root = speech_commands_dir / "rfcx-species-audio-detection"
    for split, n in (("train", 3), ("test", 2)):
        for i in range(n):
            path = root / split / f"rec{i}.flac"
            path.parent.mkdir(parents=True, exist_ok=True)
            rng = np.random.default_rng(i)
            sf.write(str(path), rng.normal(0, 0.1 * (i + 1), 48000 * 2), 48000, format="FLAC")
    return speech_commands_dir


def test_speech_commands_splits_and_sorted_classes(speech_commands_dir):
    folder = find_speech_commands(speech_commands_dir)
    train, classes = speech_commands_files(folder, "train")
    val, _ = speech_commands_files(folder, "val")
    assert classes == ("no", "up", "yes")  # sorted, _background_noise_ excluded
    assert len(train) == 6 and len(val) == 3
    assert not {p.name for p in val} & {p.name for p in train if p.name.startswith("spk0")}
    assert all("spk0" not in p.name and "spk1" not in p.name for p in train)


def test_speech_commands_are_resampled_padded_and_labelled(rainforest_dir):
    data = generate(spec("RBFP", n=6, source="files", data_dir=str(rainforest_dir), rate=8000, duration=1.0))
    assert data.waves.shape == (6, 4, 8000) and data.classes == ("no", "up", "yes")
    assert set(data.labels) <= {0, 1, 2}
    speech = data.waves[:, 0].astype(float) / 32767
    # the 0.6 s clips are zero-padded to 1 s; the 1 s clips fill it
    filled = (np.abs(speech[:, 5000:]) > 0).mean(axis=1)
    assert {round(float(f)) for f in filled} == {0, 1}
    # a 300 Hz "yes" stays at 300 Hz after resampling from 16 kHz to 8 kHz
    yes = speech[data.labels == 2][0]
    spectrum = np.abs(np.fft.rfft(yes[:4000]))
    assert abs(np.argmax(spectrum) * 8000 / 4000 - 300) < 5


def test_rainforest_backgrounds_from_flac(rainforest_dir):
    assert find_rainforest(rainforest_dir).name == "rfcx-species-audio-detection"
    data = generate(spec("SBRP", n=8, source="files", data_dir=str(rainforest_dir), rate=8000, duration=1.0))
    noise = np.stack([np.delete(w, c, axis=0) for w, c in zip(data.waves, data.channels)]).astype(float) / 32767
    assert noise.shape == (8, 3, 8000)
    p99 = np.percentile(np.abs(noise), 99, axis=2)
    assert np.allclose(p99, 1.0, atol=1e-3)


def test_missing_real_data_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="Speech Commands"):
        generate(spec(source="files", data_dir=str(tmp_path)))
    with pytest.raises(ValueError, match="--chaosmining-data"):
        generate(spec(source="files"))


def test_missing_rainforest_is_a_clear_error(speech_commands_dir):
    with pytest.raises(FileNotFoundError, match="Rainforest"):
        generate(spec("SBFP", n=4, source="files", data_dir=str(speech_commands_dir), rate=8000))


def test_published_folder_is_read_by_column_position(tmp_path):
    folder = tmp_path / "SBRP"
    rows = [("a0", "yes", 2), ("a1", "no", 0), ("a2", "yes", 1)]
    for audio_id, _, _ in rows:
        _wav(folder / f"{audio_id}.wav", 0.25, channels=3)
    # the header does not matter (the reference's generator and loader disagree on it)
    (folder / "meta_data.csv").write_text("audio_name,label,pos\n" + "".join(f"{a},{b},{c}\n" for a, b, c in rows))
    data = load_published(folder)
    assert data.waves.shape == (3, 3, 4000) and data.waves.dtype == np.int16
    assert data.classes == ("no", "yes") and list(data.labels) == [1, 0, 1]
    assert list(data.channels) == [2, 0, 1]
    assert len(load_published(folder, limit=2)) == 2


def test_clips_decoded_by_dataloader_workers_are_the_clips_decoded_in_process(rainforest_dir, monkeypatch):
    """Real-format files decode in DataLoader worker processes (core.storage.decoding) to the same
    arrays, in the same order, as without workers."""
    made = {}
    for workers in ("0", "2"):
        monkeypatch.setenv("CHAOSMINING_DECODE_WORKERS", workers)
        made[workers] = generate(
            spec("SBRP", n=8, source="files", data_dir=str(rainforest_dir), rate=8000, duration=1.0)
        )
    assert np.array_equal(made["0"].waves, made["2"].waves) and np.array_equal(made["0"].labels, made["2"].labels)


def test_decoding_workers_keep_order_and_start_only_for_many_items(monkeypatch):
    from pytest_chaosmining.core.storage.decoding import MIN_ITEMS_FOR_WORKERS, decode_all, default_workers

    monkeypatch.delenv("CHAOSMINING_DECODE_WORKERS", raising=False)
    assert default_workers(MIN_ITEMS_FOR_WORKERS - 1) == 0
    assert decode_all(abs, list(range(-40, 40)), workers=2) == [abs(i) for i in range(-40, 40)]
    monkeypatch.setenv("CHAOSMINING_DECODE_WORKERS", "3")
    assert default_workers(1) == 3
