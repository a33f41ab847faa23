//! Generated article text: English news stories and Chinese news stories.
//!
//! Each story favours its own random subset of the vocabulary and has its own
//! invented people and places, so two different stories share little beyond
//! common words, while the same seed always gives the same story.

use crate::prng::SplitMix64;
use crate::vocabulary::*;

/// Fewest and most words in an English story body.
pub const ENGLISH_BODY_WORDS: (usize, usize) = (320, 780);
/// Fewest and most characters in a Chinese story body.
pub const CHINESE_BODY_CHARACTERS: (usize, usize) = (450, 1100);
/// Share (in percent) of content words drawn from the story's own favourites.
const FAVOURED_WORD_PERCENT: u32 = 65;

/// What a story is about; two stories with the same topic share the words of
/// their title's beginning but have independently generated bodies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoryTopic {
    /// An invented place name, the first word of the title.
    pub place: String,
    /// The institution or thing the story is about, the second word.
    pub subject: String,
}

impl StoryTopic {
    pub fn generate(rng: &mut SplitMix64) -> Self {
        Self {
            place: place_name(rng),
            subject: rng.pick(NOUNS).to_string(),
        }
    }
}

/// An English news story.
#[derive(Debug, Clone)]
pub struct EnglishStory {
    pub topic: StoryTopic,
    pub title: String,
    /// "Clara Moreau"
    pub author: String,
    /// "March 4, 2019"
    pub date_display: String,
    /// "2019-03-04"
    pub date_iso: String,
    /// Body paragraphs, plain text (not HTML-escaped).
    pub paragraphs: Vec<String>,
}

impl EnglishStory {
    /// A story about `topic` (or a fresh topic when `None`).
    pub fn generate(rng: &mut SplitMix64, topic: Option<&StoryTopic>) -> Self {
        let topic = match topic {
            Some(topic) => topic.clone(),
            None => StoryTopic::generate(rng),
        };
        let favourites = Favourites::choose(rng);
        let object = favourites.noun(rng);
        let mut second_object = favourites.noun(rng);
        while second_object == object {
            second_object = rng.pick(NOUNS);
        }
        let title = format!(
            "{} {} {} {} {object} {second_object}",
            topic.place,
            topic.subject,
            rng.pick(PRESENT_VERBS),
            favourites.adjective(rng),
        );
        let people: Vec<String> = (0..rng.between(2, 4)).map(|_| person_name(rng)).collect();
        let places: Vec<String> = std::iter::once(topic.place.clone())
            .chain((0..rng.between(1, 2)).map(|_| place_name(rng)))
            .collect();
        let author = person_name(rng);
        let (year, month, day) = (
            rng.between(2015, 2023),
            rng.between(1, 12),
            rng.between(1, 28),
        );

        let target_words = rng.between(ENGLISH_BODY_WORDS.0, ENGLISH_BODY_WORDS.1 - 40);
        let mut paragraphs = Vec::new();
        let mut words = 0;
        while words < target_words {
            let mut paragraph = Vec::new();
            for _ in 0..rng.between(3, 6) {
                let sentence = english_sentence(rng, &favourites, &people, &places, &topic);
                words += sentence.split_whitespace().count();
                paragraph.push(sentence);
                if words >= target_words {
                    break;
                }
            }
            paragraphs.push(paragraph.join(" "));
        }
        Self {
            topic,
            title: capitalize(&title),
            author,
            date_display: format!("{} {day}, {year}", MONTHS[month - 1]),
            date_iso: format!("{year}-{month:02}-{day:02}"),
            paragraphs,
        }
    }

    pub fn body_text(&self) -> String {
        self.paragraphs.join("\n")
    }
}

/// A Chinese news story.
#[derive(Debug, Clone)]
pub struct ChineseStory {
    pub title: String,
    /// "王伟"
    pub author: String,
    /// "2019年02月20日 02:26"
    pub date_display: String,
    pub paragraphs: Vec<String>,
}

impl ChineseStory {
    pub fn generate(rng: &mut SplitMix64) -> Self {
        let favourites: Vec<&str> = (0..40).map(|_| rng.pick(CHINESE_WORDS)).collect();
        let word = |rng: &mut SplitMix64| -> &'static str {
            if rng.chance(FAVOURED_WORD_PERCENT) {
                favourites[rng.below(favourites.len())]
            } else {
                rng.pick(CHINESE_WORDS)
            }
        };
        let title: String = (0..rng.between(4, 6)).map(|_| word(rng)).collect();
        let author = format!(
            "{}{}",
            rng.pick(CHINESE_SURNAMES),
            (0..rng.between(1, 2))
                .map(|_| rng.pick(CHINESE_GIVEN_NAME_CHARACTERS))
                .collect::<String>()
        );
        let date_display = format!(
            "{}年{:02}月{:02}日 {:02}:{:02}",
            rng.between(2015, 2023),
            rng.between(1, 12),
            rng.between(1, 28),
            rng.between(0, 23),
            rng.between(0, 59)
        );
        let target_characters =
            rng.between(CHINESE_BODY_CHARACTERS.0, CHINESE_BODY_CHARACTERS.1 - 120);
        let mut paragraphs = Vec::new();
        let mut characters = 0;
        while characters < target_characters {
            let mut paragraph = String::new();
            for _ in 0..rng.between(2, 4) {
                let clauses = rng.between(2, 4);
                for clause in 0..clauses {
                    for _ in 0..rng.between(3, 6) {
                        paragraph.push_str(word(rng));
                    }
                    let punctuation = if clause + 1 == clauses {
                        rng.pick(CHINESE_SENTENCE_ENDS)
                    } else {
                        rng.pick(CHINESE_CLAUSE_SEPARATORS)
                    };
                    paragraph.push_str(punctuation);
                }
            }
            characters += paragraph.chars().count();
            paragraphs.push(paragraph);
        }
        Self {
            title,
            author,
            date_display,
            paragraphs,
        }
    }

    pub fn body_text(&self) -> String {
        self.paragraphs.join("\n")
    }
}

/// The story's own preferred words and style. Most content words come from
/// its favourites, and it uses only a few of the function words and sentence
/// forms, so even the common words are distributed differently per story.
struct Favourites {
    nouns: Vec<&'static str>,
    verbs: Vec<&'static str>,
    adjectives: Vec<&'static str>,
    determiners: Vec<&'static str>,
    prepositions: Vec<&'static str>,
    adverbs: Vec<&'static str>,
    connectives: Vec<&'static str>,
    speech_verbs: Vec<&'static str>,
    /// Relative weight of each of the `SENTENCE_FORMS` sentence forms.
    sentence_form_weights: Vec<usize>,
}

/// How many sentence forms `english_sentence` knows.
const SENTENCE_FORMS: usize = 7;

impl Favourites {
    fn choose(rng: &mut SplitMix64) -> Self {
        let mut subset = |all: &'static [&'static str], count: usize| -> Vec<&'static str> {
            let mut all = all.to_vec();
            rng.shuffle(&mut all);
            all.truncate(count);
            all
        };
        let nouns = subset(NOUNS, 28);
        let verbs = subset(PAST_VERBS, 12);
        let adjectives = subset(ADJECTIVES, 14);
        let determiners = subset(DETERMINERS, 4);
        let prepositions = subset(PREPOSITIONS, 5);
        let adverbs = subset(ADVERBS, 6);
        let connectives = subset(CONNECTIVES, 4);
        let speech_verbs = subset(SPEECH_VERBS, 2);
        let sentence_form_weights = (0..SENTENCE_FORMS)
            .map(|_| if rng.chance(40) { 0 } else { rng.between(1, 6) })
            .collect();
        Self {
            nouns,
            verbs,
            adjectives,
            determiners,
            prepositions,
            adverbs,
            connectives,
            speech_verbs,
            sentence_form_weights,
        }
    }

    fn sentence_form(&self, rng: &mut SplitMix64) -> usize {
        let total: usize = self.sentence_form_weights.iter().sum();
        if total == 0 {
            return 0;
        }
        let mut roll = rng.below(total);
        for (form, weight) in self.sentence_form_weights.iter().enumerate() {
            if roll < *weight {
                return form;
            }
            roll -= weight;
        }
        0
    }

    fn preposition(&self, rng: &mut SplitMix64) -> &'static str {
        rng.pick(&self.prepositions)
    }

    fn adverb(&self, rng: &mut SplitMix64) -> &'static str {
        rng.pick(&self.adverbs)
    }

    fn connective(&self, rng: &mut SplitMix64) -> &'static str {
        rng.pick(&self.connectives)
    }

    fn speech_verb(&self, rng: &mut SplitMix64) -> &'static str {
        rng.pick(&self.speech_verbs)
    }

    fn from(
        rng: &mut SplitMix64,
        favourites: &[&'static str],
        all: &'static [&'static str],
    ) -> &'static str {
        if rng.chance(FAVOURED_WORD_PERCENT) {
            favourites[rng.below(favourites.len())]
        } else {
            rng.pick(all)
        }
    }

    fn noun(&self, rng: &mut SplitMix64) -> &'static str {
        Self::from(rng, &self.nouns, NOUNS)
    }

    fn verb(&self, rng: &mut SplitMix64) -> &'static str {
        Self::from(rng, &self.verbs, PAST_VERBS)
    }

    fn adjective(&self, rng: &mut SplitMix64) -> &'static str {
        Self::from(rng, &self.adjectives, ADJECTIVES)
    }

    /// "the costly bridge", "a tunnel"
    fn noun_phrase(&self, rng: &mut SplitMix64) -> String {
        let determiner = rng.pick(&self.determiners);
        let words = if rng.chance(55) {
            format!("{} {}", self.adjective(rng), self.noun(rng))
        } else {
            self.noun(rng).to_string()
        };
        let starts_with_vowel = words.starts_with(['a', 'e', 'i', 'o', 'u']);
        let determiner = if determiner == "a" && starts_with_vowel {
            "an"
        } else {
            determiner
        };
        format!("{determiner} {words}")
    }
}

fn english_sentence(
    rng: &mut SplitMix64,
    words: &Favourites,
    people: &[String],
    places: &[String],
    topic: &StoryTopic,
) -> String {
    let person = &people[rng.below(people.len())];
    let place = &places[rng.below(places.len())];
    let sentence = match words.sentence_form(rng) {
        0 => format!(
            "{} {} {} {} {}.",
            words.noun_phrase(rng),
            words.verb(rng),
            words.noun_phrase(rng),
            words.preposition(rng),
            words.noun_phrase(rng)
        ),
        1 => format!(
            "{person} {} {} of {}.",
            words.verb(rng),
            words.noun_phrase(rng),
            words.noun_phrase(rng)
        ),
        2 => format!(
            "{}, {} in {place} {} {} {}.",
            words.connective(rng),
            words.noun_phrase(rng),
            words.adverb(rng),
            words.verb(rng),
            words.noun_phrase(rng)
        ),
        3 => format!(
            "\"{} {} {},\" {} {person}.",
            capitalize(&words.noun_phrase(rng)),
            words.verb(rng),
            words.noun_phrase(rng),
            words.speech_verb(rng)
        ),
        4 => format!(
            "According to {person}, {} percent of {} {} {} {}.",
            rng.between(3, 97),
            words.noun_phrase(rng),
            words.verb(rng),
            words.noun_phrase(rng),
            words.adverb(rng)
        ),
        5 => format!(
            "The {} of {} {} {} {} {} {place}.",
            topic.subject,
            topic.place,
            words.adverb(rng),
            words.verb(rng),
            words.noun_phrase(rng),
            words.preposition(rng)
        ),
        _ => format!(
            "{} {} {} {} and {} {}.",
            words.noun_phrase(rng),
            words.verb(rng),
            words.noun_phrase(rng),
            words.preposition(rng),
            words.noun_phrase(rng),
            words.adverb(rng)
        ),
    };
    capitalize(&sentence)
}

/// "Clara Moreau"
pub fn person_name(rng: &mut SplitMix64) -> String {
    format!("{} {}", rng.pick(FIRST_NAMES), rng.pick(LAST_NAMES))
}

/// An invented place name such as "Velmorton".
pub fn place_name(rng: &mut SplitMix64) -> String {
    let mut name: String = (0..rng.between(1, 2))
        .map(|_| rng.pick(PLACE_SYLLABLES))
        .collect();
    name.push_str(rng.pick(PLACE_SUFFIXES));
    capitalize(&name)
}

/// Upper-cases the first letter (the first after a leading quote).
pub fn capitalize(text: &str) -> String {
    let mut result = String::with_capacity(text.len());
    let mut done = false;
    for character in text.chars() {
        if !done && character.is_alphabetic() {
            result.extend(character.to_uppercase());
            done = true;
        } else {
            result.push(character);
        }
    }
    result
}

/// Replaces `count` nouns of `paragraphs` with other nouns of the story; used for the near-duplicate `/edit/N` pages.
/// Returns the edited paragraphs and the (old, new) word pairs.
pub fn edit_words(
    rng: &mut SplitMix64,
    paragraphs: &[String],
    count: usize,
) -> (Vec<String>, Vec<(String, String)>) {
    let mut paragraphs: Vec<Vec<String>> = paragraphs
        .iter()
        .map(|paragraph| paragraph.split(' ').map(str::to_string).collect())
        .collect();
    // Replacements come from nouns the story already uses, so an edit only
    // shifts word counts and adds no new vocabulary: a minimal change.
    let used_nouns: Vec<String> = {
        let mut used: Vec<String> = paragraphs
            .iter()
            .flatten()
            .filter(|word| NOUNS.contains(&word.as_str()))
            .cloned()
            .collect();
        used.sort();
        used.dedup();
        used
    };
    let mut changes = Vec::new();
    let mut changed_positions = Vec::new();
    let mut attempts = 0;
    while changes.len() < count && attempts < 10_000 {
        attempts += 1;
        let paragraph = rng.below(paragraphs.len());
        let position = rng.below(paragraphs[paragraph].len());
        if changed_positions.contains(&(paragraph, position)) {
            continue;
        }
        let old = &paragraphs[paragraph][position];
        if !NOUNS.contains(&old.as_str()) {
            continue;
        }
        let new = used_nouns[rng.below(used_nouns.len())].clone();
        if new == *old {
            continue;
        }
        changes.push((old.clone(), new.clone()));
        changed_positions.push((paragraph, position));
        paragraphs[paragraph][position] = new;
    }
    let paragraphs = paragraphs
        .into_iter()
        .map(|words| words.join(" "))
        .collect();
    (paragraphs, changes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn english_story_length_is_within_bounds() {
        for index in 0..50 {
            let mut rng = SplitMix64::for_part(1, "article", index);
            let story = EnglishStory::generate(&mut rng, None);
            let words = story.body_text().split_whitespace().count();
            assert!(
                (ENGLISH_BODY_WORDS.0..=ENGLISH_BODY_WORDS.1).contains(&words),
                "{words} words"
            );
        }
    }

    #[test]
    fn chinese_vocabulary_is_encodable_in_gbk() {
        for word in CHINESE_WORDS
            .iter()
            .chain(CHINESE_SURNAMES)
            .chain(CHINESE_GIVEN_NAME_CHARACTERS)
            .chain(CHINESE_SENTENCE_ENDS)
            .chain(CHINESE_CLAUSE_SEPARATORS)
        {
            let (_, _, unmappable) = encoding_rs::GBK.encode(word);
            assert!(!unmappable, "{word} is not in GBK");
        }
    }

    #[test]
    fn chinese_story_length_is_within_bounds() {
        for index in 0..30 {
            let mut rng = SplitMix64::for_part(1, "zh", index);
            let story = ChineseStory::generate(&mut rng);
            let characters: usize = story.paragraphs.iter().map(|p| p.chars().count()).sum();
            assert!(
                (CHINESE_BODY_CHARACTERS.0..=CHINESE_BODY_CHARACTERS.1).contains(&characters),
                "{characters} characters"
            );
        }
    }

    #[test]
    fn edit_changes_exactly_the_requested_number_of_words() {
        let mut rng = SplitMix64::for_part(1, "article", 0);
        let story = EnglishStory::generate(&mut rng, None);
        let (edited, changes) = edit_words(&mut rng, &story.paragraphs, 2);
        assert_eq!(changes.len(), 2);
        let before: Vec<&str> = story.paragraphs.iter().flat_map(|p| p.split(' ')).collect();
        let after: Vec<String> = edited
            .iter()
            .flat_map(|p| p.split(' ').map(str::to_string))
            .collect();
        let differing = before.iter().zip(&after).filter(|(a, b)| *a != b).count();
        assert_eq!(differing, 2);
    }
}
