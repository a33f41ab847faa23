//! People's and places' names for generated English articles, and the
//! verbs that introduce what they said.

/// Verbs introducing a quotation: "..., said Clara Moreau."
pub const SPEECH_VERBS: &[&str] = &[
    "said",
    "added",
    "noted",
    "argued",
    "explained",
    "insisted",
    "recalled",
    "warned",
];

pub const FIRST_NAMES: &[&str] = &[
    "Amelia", "Bruno", "Clara", "Dmitri", "Elena", "Farid", "Greta", "Hiro", "Ines", "Jonas",
    "Kavya", "Lars", "Mara", "Nikolai", "Olga", "Pablo", "Quentin", "Rosa", "Samir", "Tamsin",
    "Ugo", "Vera", "Wanda", "Xavier", "Yusuf", "Zelda", "Anika", "Bastian", "Celeste", "Dario",
    "Esme", "Florin",
];

pub const LAST_NAMES: &[&str] = &[
    "Abernathy",
    "Brennan",
    "Castellano",
    "Delacroix",
    "Eriksen",
    "Fairbanks",
    "Guzman",
    "Halvorsen",
    "Ivanova",
    "Jablonski",
    "Kowalczyk",
    "Lindqvist",
    "Moreau",
    "Nakamura",
    "Okafor",
    "Petrov",
    "Quintero",
    "Rasmussen",
    "Santoro",
    "Takahashi",
    "Underwood",
    "Valdez",
    "Whitfield",
    "Yamamoto",
    "Zimmermann",
    "Achterberg",
    "Bergstrom",
    "Carvalho",
    "Donnelly",
    "Esposito",
    "Fitzgerald",
    "Grimaldi",
];

/// Syllables for invented place names ("Velmora", "Tarkelund"), which make
/// every article's vocabulary partly its own, as real news stories are.
pub const PLACE_SYLLABLES: &[&str] = &[
    "vel", "mor", "tar", "kel", "und", "bra", "dor", "fen", "gal", "hav", "isk", "jor", "lan",
    "mar", "nor", "ost", "pel", "quin", "ros", "sal", "tor", "ulm", "vin", "wes", "yar", "zan",
    "bel", "cor", "dun", "eth",
];

pub const PLACE_SUFFIXES: &[&str] = &[
    "a", "ia", "ton", "by", "burg", "holm", "ford", "mouth", "vik", "stead",
];
