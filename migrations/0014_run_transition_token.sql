-- E7's confirm recognises its own move of a run (`planned → apply_queued`) by a random
-- token written with that move, not by its time stamp: concurrent requests in workerd can
-- read the same Date.now(), so two concurrent E7s both took the move for theirs.
ALTER TABLE `runs` ADD `transition_token` text;
