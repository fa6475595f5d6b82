-- Each leaf keeps the claims its text was read into and what reconciliation decided about it
-- (`LeafClaims`, as JSON): rows written before hold '' and have no claims. Lookup keys are
-- refiled on open (`lookup_keys_version`), now with each claim's subject and attribute.
ALTER TABLE leaves ADD COLUMN claims TEXT NOT NULL DEFAULT '';
