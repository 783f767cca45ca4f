use std::sync::LazyLock;

use hashbrown::HashMap;

use super::LangProfileList;
use super::utils::{MixBuild, get_ranked_trigrams, pack_trigram};
use super::{ARABIC_LANGS, CYRILLIC_LANGS, DEVANAGARI_LANGS, HEBREW_LANGS, LATIN_LANGS};
use super::{MAX_TOTAL_DISTANCE, MAX_TRIGRAM_DISTANCE};
use crate::Lang;
use crate::core::{FilterList, Info, InternalQuery, Text, calculate_confidence};
use crate::scripts::grouping::MultiLangScript;

#[derive(Debug)]
pub struct RawOutcome {
    pub trigrams_count: usize,
    #[allow(dead_code)]
    pub raw_distances: Vec<(Lang, u32)>,
    pub scores: Vec<(Lang, f64)>,
}

#[inline]
pub fn detect(iquery: &InternalQuery) -> Option<Info> {
    let raw_outcome = raw_detect(iquery);
    let RawOutcome {
        trigrams_count,
        scores,
        ..
    } = raw_outcome;

    let mut raw_scores_iter = scores.into_iter();

    let opt_lang_score1 = raw_scores_iter.next();
    let opt_lang_score2 = raw_scores_iter.next();

    // TODO: Logic is duplicated in alphabets. Consider refactoring
    opt_lang_score1.map(|(lang1, score1)| {
        let script = iquery.multi_lang_script.to_script();
        let confidence = if let Some((_, score2)) = opt_lang_score2 {
            calculate_confidence(score1, score2, trigrams_count)
        } else {
            1.0
        };
        Info::new(script, lang1, confidence)
    })
}

#[inline]
pub fn raw_detect(iquery: &InternalQuery) -> RawOutcome {
    let lang_profile_list = script_to_lang_profile_list(iquery.multi_lang_script);
    calculate_scores_in_profiles(&iquery.text, iquery.filter_list, lang_profile_list)
}

fn script_to_lang_profile_list(script: MultiLangScript) -> LangProfileList {
    use MultiLangScript as MLS;
    match script {
        MLS::Latin => LATIN_LANGS,
        MLS::Cyrillic => CYRILLIC_LANGS,
        MLS::Arabic => ARABIC_LANGS,
        MLS::Devanagari => DEVANAGARI_LANGS,
        MLS::Hebrew => HEBREW_LANGS,
    }
}

/// (Patch of crawl.) The profiles of one script turned around: for each trigram of any of
/// them, where it stands in which profile, so a text's trigrams are looked up once each
/// instead of every profile's 300 being looked up in the text's map.
struct InvertedProfiles {
    /// Packed trigram -> its range in `entries`.
    index: HashMap<u64, (u32, u32), MixBuild>,
    /// (the profile's index in its `LangProfileList`, the trigram's rank in that profile).
    entries: Vec<(u16, u16)>,
}

impl InvertedProfiles {
    fn new(list: LangProfileList) -> Self {
        let mut by_trigram: HashMap<u64, Vec<(u16, u16)>, MixBuild> = HashMap::default();
        for (l, &(_, profile)) in list.iter().enumerate() {
            for (rank, &trigram) in profile.iter().enumerate() {
                let at = (l as u16, rank as u16);
                by_trigram
                    .entry(pack_trigram(trigram))
                    .or_default()
                    .push(at);
            }
        }
        let mut index = HashMap::with_capacity_and_hasher(by_trigram.len(), MixBuild::default());
        let mut entries = Vec::new();
        for (trigram, at) in by_trigram {
            index.insert(trigram, (entries.len() as u32, at.len() as u32));
            entries.extend(at);
        }
        Self { index, entries }
    }
}

fn inverted(list: LangProfileList) -> &'static InvertedProfiles {
    static LATIN: LazyLock<InvertedProfiles> = LazyLock::new(|| InvertedProfiles::new(LATIN_LANGS));
    static CYRILLIC: LazyLock<InvertedProfiles> =
        LazyLock::new(|| InvertedProfiles::new(CYRILLIC_LANGS));
    static ARABIC: LazyLock<InvertedProfiles> =
        LazyLock::new(|| InvertedProfiles::new(ARABIC_LANGS));
    static DEVANAGARI: LazyLock<InvertedProfiles> =
        LazyLock::new(|| InvertedProfiles::new(DEVANAGARI_LANGS));
    static HEBREW: LazyLock<InvertedProfiles> =
        LazyLock::new(|| InvertedProfiles::new(HEBREW_LANGS));
    if std::ptr::eq(list, LATIN_LANGS) {
        &LATIN
    } else if std::ptr::eq(list, CYRILLIC_LANGS) {
        &CYRILLIC
    } else if std::ptr::eq(list, ARABIC_LANGS) {
        &ARABIC
    } else if std::ptr::eq(list, DEVANAGARI_LANGS) {
        &DEVANAGARI
    } else {
        assert!(
            std::ptr::eq(list, HEBREW_LANGS),
            "a profile list of no script"
        );
        &HEBREW
    }
}

#[inline]
fn calculate_scores_in_profiles(
    text: &Text,
    filter_list: &FilterList,
    lang_profile_list: LangProfileList,
) -> RawOutcome {
    let mut lang_distances: Vec<(Lang, u32)> = Vec::with_capacity(lang_profile_list.len());

    let ranked = get_ranked_trigrams(&text.lowercase());
    let unique_trigrams_count = ranked.len();

    // (Patch of crawl.) Upstream's `calculate_distance` summed, for each of a profile's
    // trigrams, `|position in text - rank in profile|` if the text has it, else
    // MAX_TRIGRAM_DISTANCE. The same sum is MAX_TRIGRAM_DISTANCE a profile trigram less
    // `MAX_TRIGRAM_DISTANCE - |position - rank|` for each one the text has: those savings are
    // added up here from the text's side, a look-up a text trigram.
    let inverted = inverted(lang_profile_list);
    let mut savings = vec![0i64; lang_profile_list.len()];
    for (position, trigram) in ranked.iter().enumerate() {
        if let Some(&(start, len)) = inverted.index.get(trigram) {
            let at = &inverted.entries[start as usize..(start + len) as usize];
            for &(l, rank) in at {
                let dist = (position as i64 - rank as i64).abs();
                savings[l as usize] += MAX_TRIGRAM_DISTANCE as i64 - dist;
            }
        }
    }

    for (l, &(lang, lang_trigrams)) in lang_profile_list.iter().enumerate() {
        if !filter_list.is_allowed(lang) {
            continue;
        }
        let full = lang_trigrams.len() as i64 * MAX_TRIGRAM_DISTANCE as i64;
        let dist = finish_distance((full - savings[l]) as u32, unique_trigrams_count);
        lang_distances.push(((lang), dist));
    }

    // Sort languages by distance
    lang_distances.sort_unstable_by_key(|(_, dist)| *dist);

    let max_dist = unique_trigrams_count as u32 * MAX_TRIGRAM_DISTANCE;

    let raw_scores = lang_distances
        .iter()
        .map(|&(lang, distance)| (lang, distance_to_raw_score(distance, max_dist)))
        .collect();

    RawOutcome {
        trigrams_count: unique_trigrams_count,
        scores: raw_scores,
        raw_distances: lang_distances,
    }
}

/// The end of upstream's `calculate_distance`, from the summed distance `total_dist` and the
/// number of the text's (ranked) trigrams.
#[inline]
fn finish_distance(mut total_dist: u32, text_trigrams_len: usize) -> u32 {
    let count = text_trigrams_len as u32;

    if MAX_TRIGRAM_DISTANCE > count {
        let delta = MAX_TRIGRAM_DISTANCE - count;
        total_dist -= delta * MAX_TRIGRAM_DISTANCE;
    }

    total_dist.clamp(0, MAX_TOTAL_DISTANCE)
}

#[inline]
fn distance_to_raw_score(distance: u32, max_distance: u32) -> f64 {
    let similarity = max_distance - distance;
    similarity as f64 / max_distance as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_when_german_is_given() {
        let text = "Die Ordnung muss für immer in diesem Codebase bleiben";
        let iq = InternalQuery {
            text: Text::new(text),
            filter_list: &FilterList::default(),
            multi_lang_script: MultiLangScript::Latin,
        };
        let raw_outcome = raw_detect(&iq);

        assert_eq!(raw_outcome.trigrams_count, 50);

        let &(first_lang, first_score) = raw_outcome.scores.first().unwrap();
        let &(_last_lang, last_score) = raw_outcome.scores.last().unwrap();

        assert_eq!(first_lang, Lang::Deu);

        assert!(first_score >= 0.0);
        assert!(first_score <= 1.0);

        assert!(last_score >= 0.0);
        assert!(last_score <= 1.0);
    }
}
