-- The temperature a language model's answer was sampled at
-- (-lm-temperature; its structure at it, free text at 1), so that runs at
-- different temperatures can be told apart and their groups compared. 0
-- for greedy steps, the features network and before it was recorded.
ALTER TABLE {db}.actions ADD COLUMN lm_temperature Float32 AFTER lm_answer;
